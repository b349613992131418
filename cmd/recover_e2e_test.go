package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestResumedSenderIsToldItsMessageWasDelivered: agentteam stops after
// alice's message reached bob's inbox but before her session recorded the
// tool result (made here by cutting her session after the call, which is
// what a kill at that moment leaves). Resumed, alice reads that the message
// was delivered, not that the call was interrupted, and sends nothing twice.
func TestResumedSenderIsToldItsMessageWasDelivered(t *testing.T) {
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{
			call("spawn_teammate", `{"name":"bob","role":"tester","prompt":"wait for alice"}`),
			call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"tell bob the parser is ready"}`),
		}}},
		"alice": {{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"bob","content":"the parser is ready"}`)}}, {Content: "alice: told bob"}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": ok"} }))
	defer srv.Close()
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv), "", "run", "build it"), "run")
	noViolations(t, srv)

	// Cut alice's session just after the assistant line that called send_message.
	path := state(ws, "sessions", "alice.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]byte
	callID := ""
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		kept = append(kept, line)
		var m openai.ChatCompletionMessage
		if json.Unmarshal(line, &m) == nil && len(m.ToolCalls) == 1 && m.ToolCalls[0].Function.Name == "send_message" {
			callID = m.ToolCalls[0].ID
			break
		}
	}
	if callID == "" {
		t.Fatalf("alice's session has no send_message call:\n%s", data)
	}
	if err := os.WriteFile(path, bytes.Join(kept, nil), 0o644); err != nil {
		t.Fatal(err)
	}

	srv2 := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": ok"} })
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "--resume", "go on"), "run --resume")
	noViolations(t, srv2)
	reqs := srv2.Requests("alice")
	if len(reqs) == 0 {
		t.Fatal("alice did not go on after the resume")
	}
	answer := ""
	for _, m := range reqs[0].Messages {
		if m.Role == "tool" && m.ToolCallID == callID {
			answer = m.Content
		}
	}
	if !strings.Contains(answer, "Message sent to bob") || strings.Contains(answer, "interrupted") {
		t.Fatalf("alice is told %q about her delivered message", answer)
	}
	n := 0
	for _, m := range readInbox(t, ws, "bob") {
		if m.From == "alice" && m.Content == "the parser is ready" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("bob's inbox has alice's message %d times, want once", n)
	}
}
