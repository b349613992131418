package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/registry"
)

// lastToolResult is the newest tool result in a conversation (inbox
// messages taken in after it may follow).
func lastToolResult(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}

// spawned reports whether the conversation has a spawn_teammate call for name.
func spawned(msgs []openai.ChatCompletionMessage, name string) bool {
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "spawn_teammate" && strings.Contains(tc.Function.Arguments, `"name":"`+name+`"`) {
				return true
			}
		}
	}
	return false
}

// handoffScript: the lead creates t1 and spawns bob, then alice once bob
// stands by. Alice claims t1, drafts a file and hands t1 to bob (again
// after a pause, should bob still be busy). Bob, given the context, writes
// hello.txt and completes t1 (again after a pause, should the board not
// have changed owner yet).
func handoffScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	last := lastToolResult(msgs)
	tool := func(name, args string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: name, Args: args}}}
	}
	pause := tool("bash", `{"command":"sleep 0.1"}`)
	switch c.Agent {
	case "alice":
		switch {
		case !called(msgs, "task_claim"):
			return tool("task_claim", `{"id":"t1"}`)
		case !called(msgs, "write_file"):
			return tool("write_file", `{"path":"draft.txt","content":"hel"}`)
		case strings.Contains(last, "Handed t1"):
			return fakellm.Reply{Content: "alice: handed t1 to bob"}
		case strings.Contains(last, "rejected"):
			return pause
		}
		return tool("handoff", `{"to":"bob","task":"t1","reason":"bob writes the greetings","context":"draft.txt has a start; finish hello.txt with one line: hello"}`)
	case "bob":
		switch {
		case !contentHas(msgs, `type="context_transfer"`):
			return fakellm.Reply{Content: "bob: standing by"}
		case !called(msgs, "write_file"):
			return tool("write_file", `{"path":"hello.txt","content":"hello\n"}`)
		case strings.Contains(last, "t1 is completed"):
			return fakellm.Reply{Content: "bob: finished t1"}
		case strings.HasPrefix(last, "error"):
			return pause
		}
		return tool("task_update", `{"id":"t1","status":"completed","note":"hello.txt says hello"}`)
	}
	switch {
	case !called(msgs, "task_create"):
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "task_create", Args: `{"subject":"write hello.txt","description":"one line: hello"}`},
			{Name: "spawn_teammate", Args: `{"name":"bob","role":"programmer","prompt":"stand by for work"}`},
		}}
	case !spawned(msgs, "alice") && contentHas(msgs, "bob: standing by"):
		return tool("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"claim t1, start it, then hand it to bob"}`)
	}
	return fakellm.Reply{Content: "lead: noted"}
}

// TestHandoffThroughTheBinary: a teammate hands its claimed task to
// another; the board shows the new owner and the registry both sides'
// completed handoff, every step linked by the request id.
func TestHandoffThroughTheBinary(t *testing.T) {
	srv := fakellm.New(handoffScript)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "get hello.txt written")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if data, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(data) != "hello\n" {
		t.Fatalf("hello.txt: %q %v\n%s", data, err, r.stderr)
	}

	b := tasksJSON(t, ws)
	if len(b.Tasks) != 1 || b.Tasks[0].Owner != "bob" || b.Tasks[0].Status != board.TaskCompleted {
		t.Fatalf("tasks --json: %+v\n%s", b.Tasks, r.stderr)
	}
	if !strings.Contains(r.stderr, "alice handed over t1: write hello.txt (to bob)") {
		t.Errorf("run's progress lacks the handover:\n%s", r.stderr)
	}

	tr := runBin(t, ws, nil, "", "team", "--json")
	mustSucceed(t, tr, "team --json")
	var cfg struct{ Teammates []registry.Member }
	if err := json.Unmarshal([]byte(tr.stdout), &cfg); err != nil {
		t.Fatal(err)
	}
	sides := map[string]registry.HandoffState{}
	for _, m := range cfg.Teammates {
		if n := len(m.Handoffs); n > 0 {
			sides[m.Name] = m.Handoffs[n-1]
		}
	}
	a, bo := sides["alice"], sides["bob"]
	if a.ID == "" || a.ID != bo.ID || !strings.HasPrefix(a.ID, "handoff-") {
		t.Fatalf("team --json handoffs: alice %+v, bob %+v", a, bo)
	}
	if a.Role != registry.HandoffSender || a.Peer != "bob" || a.TaskID != "t1" || a.State != registry.HandoffCompleted {
		t.Errorf("alice's side %+v", a)
	}
	if bo.Role != registry.HandoffReceiver || bo.Peer != "alice" || bo.State != registry.HandoffCompleted {
		t.Errorf("bob's side %+v", bo)
	}

	// Each step in the inbox of the agent it is for, linked by the id.
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	steps := func(name string) []string {
		msgs, _, err := store.ReadAll(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, m := range msgs {
			if m.CorrelationID == a.ID {
				types = append(types, string(m.Type))
			}
		}
		return types
	}
	if got := strings.Join(steps("bob"), ","); got != "handoff_request,context_transfer" {
		t.Errorf("bob's inbox steps %s", got)
	}
	if got := strings.Join(steps("alice"), ","); got != "handoff_accept,handoff_complete" {
		t.Errorf("alice's inbox steps %s", got)
	}
	bobs, _, _ := store.ReadAll(t.Context(), "bob")
	for _, m := range bobs {
		if m.Type == handoff.TypeContextTransfer && !strings.Contains(m.Content, "draft.txt") {
			t.Errorf("the context does not name the file alice touched:\n%s", m.Content)
		}
	}
}
