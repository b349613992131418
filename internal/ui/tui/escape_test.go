package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/team/event"
)

// TestEscapeSequencesFromModelsNeverReachTheTerminal: what a model writes
// (replies, reasoning, a streaming tail, a tool call's argument, a
// teammate's role and report) and what a tool prints (a bash result with
// colours, a failure) may hold escape sequences: OSC 52 would write the
// person's clipboard, others move the cursor, retitle or clear the screen.
// Each shows as '?'. The harness draws without colour, so the frame holds
// no escape byte at all unless one came through.
func TestEscapeSequencesFromModelsNeverReachTheTerminal(t *testing.T) {
	const esc = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;owned\x1b\\\u009b31m"
	hs := newHarness(t, 120, 60, Options{HasModel: true})
	hs.m.r.expand, hs.m.r.thinking = true, true // tool results and reasoning shown whole
	snap := members("alice:working")
	snap.Config.Teammates[0].Role = "tester" + esc
	hs.send(snap)
	args, err := json.Marshal(map[string]string{"command": "ls" + esc})
	if err != nil {
		t.Fatal(err)
	}
	hs.send(bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: "lead", Reasoning: "thinking" + esc}}}})
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: string(args), Result: "out" + esc}},
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"x"}`, Result: "failed" + esc, IsError: true}},
		event.Event{Agent: "lead", Payload: event.Answer{Text: "reply" + esc}},
		event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "report" + esc}},
		event.Event{Agent: "lead", Payload: event.Failure{Text: "failure" + esc}},
	))
	hs.send(deltas("lead", false, "streaming"+esc))
	v := hs.view()
	hs.mustSee("tester?]52;c;", "bash ls?]52", "thinking?]52", "out?]52", "reply?]52", "report?]52", "failure?]52", "streaming?]52")
	for _, bad := range []string{"\x1b", "\x07", "\u009b"} {
		if i := strings.Index(v, bad); i >= 0 {
			t.Fatalf("the frame passes %q to the terminal near %q:\n%s", bad, v[max(0, i-40):min(len(v), i+40)], v)
		}
	}
}
