package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// TestCorruptReadPositionStillDelivers: garbage in alice's read position
// must not make her messages vanish. The resumed run sets it aside, tells
// the person, and alice gets her new message, with every earlier one still
// in her conversation exactly once.
func TestCorruptReadPositionStillDelivers(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser"}`)}}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} }))
	defer srv.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv), "", "run", "build a parser"), "first run")
	if r := runBin(t, ws, nil, "", "send", "--to", "alice", "also handle empty input"); r.code != 0 {
		t.Fatalf("send: %s", r.stderr)
	}
	spoilReadPosition(t, ws, "alice")

	srv2 := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": handled"} })
	defer srv2.Close()
	r := runBin(t, ws, fakeEnv(srv2), "", "run", "--resume", "go on")
	mustSucceed(t, r, "run --resume")
	noViolations(t, srv2)
	got := false
	for _, req := range srv2.Requests("alice") {
		for _, m := range req.Messages {
			got = got || strings.Contains(m.Content, "also handle empty input")
		}
	}
	if !got {
		t.Fatalf("alice never got the message sent while her read position was corrupt:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "alice: repair") || !strings.Contains(r.stderr, readPositionPlace("alice")) {
		t.Errorf("the person is not told of the repair:\n%s", r.stderr)
	}
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventRepair, "alice") {
		t.Error("events.jsonl has no repair event for alice")
	}
	assertEachMessageOnce(t, ws, "alice")
	entries, _ := os.ReadDir(state(ws, "inbox"))
	kept := false
	for _, e := range entries {
		kept = kept || strings.HasPrefix(e.Name(), "alice.cursor.corrupt-")
	}
	if !kept {
		t.Error("the corrupt read position was not kept aside")
	}
}
