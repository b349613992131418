package loop

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agentteam/agentteam/tools"
)

// TestToolCallIDsAreUniqueInAConversation: a server that numbers its calls
// from 1 in every response (call_1 each turn) still gets a conversation in
// which every call id is its own, across a restore too, and each tool run
// sees the id of the call it answers.
func TestToolCallIDsAreUniqueInAConversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	var seen []string
	probe := funcTool{name: "probe", run: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		seen = append(seen, tools.CallID(ctx))
		return tools.Text("ok"), nil
	}}
	m := &fakeModel{t: t, steps: []step{
		calls(tc{"call_1", "probe", `{}`}), calls(tc{"call_1", "probe", `{}`}), final("done"),
	}}
	a := newAgent(t, AgentConfig{Model: m, SessionPath: path}, probe)
	a.Say(t.Context(), "go")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Restored, the agent keeps knowing the ids it used.
	m2 := &fakeModel{t: t, steps: []step{calls(tc{"call_1", "probe", `{}`}), final("done")}}
	b := newAgent(t, AgentConfig{Model: m2, SessionPath: path}, probe)
	b.Say(t.Context(), "again")
	if _, err := b.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	made := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	for _, msg := range b.Messages() {
		for _, c := range msg.ToolCalls {
			if ids[c.ID] {
				t.Fatalf("call id %s used twice:\n%s", c.ID, dump(b.Messages()))
			}
			ids[c.ID] = true
			if c.ID != "call_1" && !made.MatchString(c.ID) {
				t.Errorf("made-up call id %q is not 9 letters and digits", c.ID)
			}
		}
	}
	if len(ids) != 3 || len(seen) != 3 {
		t.Fatalf("%d distinct ids, %d tool runs; want 3 and 3", len(ids), len(seen))
	}
	for _, id := range seen {
		if !ids[id] {
			t.Errorf("a tool run saw call id %q, which is not in the conversation", id)
		}
	}
	checkPairing(t, b.Messages())
}
