package event

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/registry"
)

// TestEventLinesKeepTheirShape: an event is one flat object whose fields
// have the names they had when Event was one flat struct, plus new ones.
func TestEventLinesKeepTheirShape(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		e    Event
		want map[string]any
	}{
		{Event{Agent: "alice", Payload: Spawn{Role: "programmer", Status: registry.StatusQueued, From: "lead", PID: 42}},
			map[string]any{"kind": "spawn", "agent": "alice", "role": "programmer", "status": "queued", "from": "lead", "pid": 42.0}},
		{Event{Agent: "alice", Payload: StatusChanged{Role: "programmer", Status: registry.StatusIdle, Reason: "resumed"}},
			map[string]any{"kind": "status", "agent": "alice", "role": "programmer", "status": "idle", "detail": "resumed"}},
		{Event{Payload: MessageDelivered{From: "lead", To: "alice", Type: "message", MessageID: "m1", Content: "hi"}},
			map[string]any{"kind": "message", "from": "lead", "to": "alice", "type": "message", "message_id": "m1", "detail": "hi"}},
		{Event{Agent: "alice", Payload: ToolCall{Tool: "bash", Args: `{"command":"ls"}`, Result: "error: no", IsError: true, Turn: 2}},
			map[string]any{"kind": "tool_call", "agent": "alice", "tool": "bash", "args": `{"command":"ls"}`, "detail": "error: no", "is_error": true, "turn": 2.0}},
		{Event{Agent: "alice", Payload: Reply{Text: "done", Tokens: 12, Turn: 3}},
			map[string]any{"kind": "reply", "agent": "alice", "detail": "done", "tokens": 12.0, "turn": 3.0}},
		{Event{Agent: "lead", Payload: Prompt{Text: "fix the tests"}},
			map[string]any{"kind": "prompt", "agent": "lead", "detail": "fix the tests"}},
		{Event{Agent: "lead", Payload: Answer{Interrupted: true}},
			map[string]any{"kind": "answer", "agent": "lead", "detail": "(interrupted)", "is_error": true, "interrupted": true}},
		{Event{Agent: "lead", Payload: Retry{Attempt: 2, Cause: llm.RetryRateLimit, HTTPStatus: 429, Delay: 1500 * time.Millisecond, Err: "HTTP 429 Too Many Requests"}},
			map[string]any{"kind": "retry", "agent": "lead", "turn": 2.0, "attempt": 2.0, "cause": "rate_limit", "http_status": 429.0, "delay_ms": 1500.0, "detail": "HTTP 429 Too Many Requests"}},
		{Event{Agent: "alice", Payload: Failure{Class: ClassRegistry, Text: "registry: locked"}},
			map[string]any{"kind": "error", "agent": "alice", "class": "registry", "detail": "registry: locked", "is_error": true}},
		{Event{Agent: "lead", Payload: BadLine{Reason: "offset 3: not JSON", Line: "{"}},
			map[string]any{"kind": "bad_line", "agent": "lead", "detail": "offset 3: not JSON", "line": "{", "is_error": true}},
		{Event{Agent: "slow", Payload: Repair{Status: registry.StatusFailed, Reason: "gone"}},
			map[string]any{"kind": "repair", "agent": "slow", "status": "failed", "detail": "gone"}},
		{Event{Agent: "alice", Payload: TaskChanged{Change: TaskChangeClaimed, TaskID: "t1", Subject: "build", Status: board.TaskInProgress}},
			map[string]any{"kind": "task", "agent": "alice", "change": "claimed", "task_id": "t1", "subject": "build", "status": "in_progress", "detail": "alice claimed t1: build"}},
		{Event{Agent: "alice", Payload: HandoffChanged{RequestID: "handoff-1", Side: registry.HandoffSender, Task: "t1", TaskID: "t1", Peer: "bob", State: registry.HandoffAwaitingAccept}},
			map[string]any{"kind": "handoff", "agent": "alice", "request_id": "handoff-1", "side": "sender", "task": "t1", "task_id": "t1", "peer": "bob",
				"status": "awaiting_accept", "detail": "handoff handoff-1 (sender of t1, with bob): awaiting accept"}},
		{Event{Agent: "alice", Payload: Activity{Tool: "bash"}},
			map[string]any{"kind": "activity", "agent": "alice", "tool": "bash", "detail": "running bash"}},
		{Event{Agent: "alice", Payload: RequestExpired{RequestRef: RequestRef{ID: "shutdown-1", RequestKind: RequestShutdown, From: "lead", To: "alice"}, Outcome: OutcomeForced, Reason: "no answer"}},
			map[string]any{"kind": "request_expired", "agent": "alice", "request_id": "shutdown-1", "request_kind": "shutdown", "from": "lead", "to": "alice", "outcome": "forced", "detail": "no answer"}},
	}
	for _, c := range cases {
		c.e.Time = at
		data, err := json.Marshal(c.e)
		if err != nil {
			t.Fatalf("%s: %v", c.e.Kind(), err)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%s: not one object: %s", c.e.Kind(), data)
		}
		c.want["time"] = "2026-11-21T10:00:00Z"
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s line\n%s\nwant %v", c.e.Kind(), data, c.want)
		}
		var back Event
		if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, c.e) {
			t.Errorf("%s read back as %+v (%v), want %+v", c.e.Kind(), back, err, c.e)
		}
	}
}

// TestOldEventLinesReadBack: lines written when Event was flat read back
// into their typed payloads; a kind this program does not know stays whole.
func TestOldEventLinesReadBack(t *testing.T) {
	lines := []struct {
		line string
		want Payload
	}{
		{`{"time":"2026-11-21T10:00:00Z","kind":"status","agent":"alice","role":"programmer","status":"idle","detail":"resumed"}`,
			StatusChanged{Role: "programmer", Status: registry.StatusIdle, Reason: "resumed"}},
		{`{"time":"2026-11-21T10:00:00Z","kind":"message","from":"lead","to":"alice","type":"message","message_id":"m1","detail":"hi"}`,
			MessageDelivered{From: "lead", To: "alice", Type: "message", MessageID: "m1", Content: "hi"}},
		{`{"time":"2026-11-21T10:00:00Z","kind":"error","agent":"alice","detail":"boom","is_error":true}`,
			Failure{Text: "boom"}},
		{`{"time":"2026-11-21T10:00:00Z","kind":"retry","agent":"lead","detail":"retrying in 1s: HTTP 429 Too Many Requests","turn":1}`,
			Retry{Err: "retrying in 1s: HTTP 429 Too Many Requests"}},
	}
	for _, l := range lines {
		var e Event
		if err := json.Unmarshal([]byte(l.line), &e); err != nil || !reflect.DeepEqual(e.Payload, l.want) {
			t.Errorf("%s read as %+v (%v), want %+v", l.line, e.Payload, err, l.want)
		}
	}
	future := `{"time":"2026-11-21T10:00:00Z","kind":"weather","agent":"alice","detail":"sunny"}`
	var e Event
	if err := json.Unmarshal([]byte(future), &e); err != nil || e.Kind() != "weather" {
		t.Fatalf("an unknown kind: %+v %v", e, err)
	}
	if data, _ := json.Marshal(e); string(data) != future {
		t.Errorf("an unknown kind written back as %s", data)
	}
	if !strings.Contains(e.Sentence(), "weather") {
		t.Errorf("an unknown kind's sentence %q", e.Sentence())
	}
}
