package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// planWriterScript is a plan-mode alice: she submits a plan and ends her
// turn; once her plan is approved she writes notes.txt and reports.
func planWriterScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	last := msgs[len(msgs)-1]
	has := func(tool string) bool {
		for _, m := range msgs {
			for _, tc := range m.ToolCalls {
				if tc.Function.Name == tool {
					return true
				}
			}
		}
		return false
	}
	approved := false
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser && strings.Contains(m.Content, `type="plan_approval_response"`) {
			approved = true
		}
	}
	call := func(name, args string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: name, Args: args}}}
	}
	switch {
	case c.Agent != "alice":
		return fakellm.Reply{Content: "nothing to do"}
	case last.Role == openai.ChatMessageRoleTool && has("write_file"):
		return fakellm.Reply{Content: "alice: wrote notes.txt"}
	case approved:
		return call("write_file", `{"path":"notes.txt","content":"notes\n"}`)
	case !has("submit_plan"):
		return call("submit_plan", `{"plan":"1. write notes.txt with one line"}`)
	}
	return fakellm.Reply{Content: "alice: plan submitted, waiting"}
}

// waitEvent reads events until one matches; the bound only catches a hang.
func waitEvent(t *testing.T, ch <-chan event.Event, what string, ok func(event.Event) bool) event.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-ch:
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no event: %s", what)
		}
	}
}

func TestApproveFromTheTUIUnblocksAPlanModeTeammate(t *testing.T) {
	srv := fakellm.New(planWriterScript)
	defer srv.Close()
	dir := t.TempDir()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := bridge.New()
	seen := make(chan event.Event, 4096)
	model := llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "m"})
	tm, err := team.Open(context.Background(), team.Options{Workspace: ws, Model: model, PollInterval: 20 * time.Millisecond,
		OnEvent: func(e event.Event) {
			b.Event(e)
			select {
			case seen <- e:
			default: // far more room than this test's events need
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		tm.ShutdownAll("test over")
		tm.Close(context.Background())
	}()
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.flush()
	deliver := func() { // what Bridge.Run would send the program
		if m, ok := b.Take(); ok {
			hs.send(m)
		}
	}

	hs.enter("/spawn --plan alice writer write notes.txt with one line")
	hs.mustSee("spawned alice (writer) in plan mode")
	waitEvent(t, seen, "alice's plan request", func(e event.Event) bool {
		m, ok := e.Payload.(event.MessageDelivered)
		return ok && m.Type == protocol.TypePlanApprovalRequest && m.From == "alice"
	})
	deliver()
	hs.mustSee("⏸ alice asks to approve a plan · plan-", "1. write notes.txt with one line", "/approve alice [feedback]")
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Fatal("alice wrote before her plan was approved")
	}

	hs.enter("/approve alice go ahead")
	hs.mustSee("Approved alice's plan")
	waitEvent(t, seen, "alice's report", func(e event.Event) bool {
		m, ok := e.Payload.(event.MessageDelivered)
		return ok && m.From == "alice" && m.Type == "result" && strings.Contains(m.Content, "wrote notes.txt")
	})
	if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "notes\n" {
		t.Fatalf("notes.txt: %q %v", data, err)
	}
	deliver()
	hs.mustSee("✓ approved by you")
	hs.mustNotSee("/reject alice feedback")

	c, err := tm.Registry().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hs.send(poll.Snapshot{Config: c, Unread: map[string]int{}})
	hs.mustSee("✓ plan approved")
	if a := c.Teammates[0]; !a.PlanMode || a.PlanState != registry.PlanApproved {
		t.Fatalf("alice in the registry: %+v", a)
	}

	hs.enter("/approve alice")
	hs.mustSee("alice has no plan waiting for review")
	hs.enter("/tasks")
	hs.mustSee("the task board is empty")

	hs.enter("/shutdown alice notes are done")
	hs.mustSee("Asked alice to shut down")
	waitEvent(t, seen, "alice shut down", func(e event.Event) bool {
		st, ok := e.Payload.(event.StatusChanged)
		return ok && e.Agent == "alice" && st.Status == registry.StatusShutdown
	})
	lead, _, err := tm.Mailbox().ReadAll(t.Context(), inbox.LeadName)
	if err != nil {
		t.Fatal(err)
	}
	var answered bool
	for _, m := range lead {
		answered = answered || m.Type == protocol.TypeShutdownResponse
	}
	if !answered {
		t.Fatalf("no shutdown_response in the lead's inbox: %+v", lead)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}
