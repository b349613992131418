package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

var planRequestRe = regexp.MustCompile(`type="plan_approval_request" id="[^"]*" correlation_id="([^"]+)"`)

// called reports whether the conversation already has a call to a tool.
func called(msgs []openai.ChatCompletionMessage, tool string) bool {
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == tool {
				return true
			}
		}
	}
	return false
}

func contentHas(msgs []openai.ChatCompletionMessage, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// protocolScript: the lead spawns alice in plan mode, approves her plan,
// and shuts her down once she reports the file written.
func protocolScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	last := msgs[len(msgs)-1]
	tool := func(name, args string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: name, Args: args}}}
	}
	if c.Agent == "alice" {
		switch {
		case last.Role == "tool" && strings.Contains(last.Content, "Wrote"):
			return fakellm.Reply{Content: "alice: wrote notes.txt"}
		case last.Role == "tool" && strings.Contains(last.Content, "plan mode"):
			return tool("submit_plan", `{"plan":"write notes.txt with one line"}`)
		case last.Role == "tool" && strings.Contains(last.Content, "Plan submitted"):
			return fakellm.Reply{Content: "alice: plan submitted, waiting"}
		}
		return tool("write_file", `{"path":"notes.txt","content":"notes\n"}`)
	}
	switch {
	case !called(msgs, "spawn_teammate"):
		return tool("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write notes.txt","plan_mode":true}`)
	case last.Role == "tool":
		return fakellm.Reply{Content: "lead: step done"}
	case !called(msgs, "review_plan"):
		if m := planRequestRe.FindAllStringSubmatch(last.Content, -1); len(m) > 0 {
			return tool("review_plan", fmt.Sprintf(`{"request_id":%q,"approve":true,"feedback":"fine"}`, m[len(m)-1][1]))
		}
	case !called(msgs, "shutdown_teammate") && contentHas(msgs, "wrote notes.txt"):
		return tool("shutdown_teammate", `{"name":"alice","reason":"the notes are written"}`)
	}
	return fakellm.Reply{Content: "lead: all done"}
}

func TestPlanApprovalAndShutdownThroughTheBinary(t *testing.T) {
	srv := fakellm.New(protocolScript)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "have alice write notes, with a plan first")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "notes\n" {
		t.Fatalf("notes.txt: %q %v\n%s", data, err, r.stderr)
	}
	// Alice's first write was refused before approval.
	reqs := srv.Requests("alice")
	if len(reqs) < 2 {
		t.Fatalf("alice made %d calls", len(reqs))
	}
	refused := reqs[1].Messages[len(reqs[1].Messages)-1]
	if refused.Role != "tool" || !strings.HasPrefix(refused.Content, "error") || !strings.Contains(refused.Content, "plan mode") {
		t.Fatalf("the write before approval was not refused: %+v", refused)
	}

	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	lead, _, _ := store.ReadAll(t.Context(), "lead")
	var planID, shutdownBy string
	for _, m := range lead {
		switch m.Type {
		case protocol.TypePlanApprovalRequest:
			planID = m.CorrelationID
		case protocol.TypeShutdownResponse:
			var p struct {
				Approve bool   `json:"approve"`
				By      string `json:"by"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || !p.Approve {
				t.Fatalf("shutdown response %+v (%v)", m, err)
			}
			shutdownBy = p.By
		}
	}
	if planID == "" || shutdownBy != "runtime" {
		t.Fatalf("lead inbox lacks the plan request or the runtime's shutdown answer: %+v", lead)
	}
	alice, _, _ := store.ReadAll(t.Context(), "alice")
	var approved bool
	for _, m := range alice {
		if m.Type == protocol.TypePlanApprovalResponse && m.CorrelationID == planID {
			approved = true
		}
	}
	if !approved {
		t.Fatalf("alice's inbox lacks the approval for %s", planID)
	}

	r = runBin(t, ws, nil, "", "team", "--json")
	var cfg struct {
		State     string
		Teammates []registry.Member
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil {
		t.Fatal(err)
	}
	a := cfg.Teammates[0]
	if a.Status != registry.StatusShutdown || !a.PlanMode || a.PlanState != registry.PlanApproved || cfg.State != registry.StateCompleted {
		t.Fatalf("team --json: state %s, alice %+v", cfg.State, a)
	}
}
