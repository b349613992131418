package event

import (
	"testing"
	"time"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/registry"
)

// TestRetryWords (moved from internal/ui/tui with the words): a retry in a
// person's words, from the cause and status the client knew.
func TestRetryWords(t *testing.T) {
	cases := []struct {
		wait time.Duration
		err  llm.Retry // what the client knew: the cause, the status, the error
		want string
	}{
		{4 * time.Second, llm.Retry{Cause: llm.RetryRateLimit, Status: 429}, "rate limited, retrying in 4 s"},
		{1500 * time.Millisecond, llm.Retry{Cause: llm.RetryServerError, Status: 502}, "the model server had an error (502 Bad Gateway), retrying in 1.5 s"},
		{300 * time.Millisecond, llm.Retry{Cause: llm.RetryConnection}, "the connection dropped, retrying in 300 ms"},
		{2 * time.Second, llm.Retry{}, "the model call failed, retrying in 2 s"},
	}
	for _, c := range cases {
		r := c.err
		r.Wait = c.wait
		if got := RetryEvent(r).Payload.(Retry).Words(); got != c.want {
			t.Errorf("words of %v after %v = %q, want %q", c.err.Cause, c.wait, got, c.want)
		}
	}
}

// TestSentences: the progress lines `agentteam run` has always printed, now
// written from the events' fields.
func TestSentences(t *testing.T) {
	cases := []struct {
		e    Event
		want string
	}{
		{Event{Agent: "alice", Payload: Spawn{Role: "programmer", Status: registry.StatusQueued, From: "lead"}}, "spawn alice (programmer)"},
		{Event{Agent: "alice", Payload: Spawn{Role: "programmer", Model: "smart/big"}}, "spawn alice (programmer) on smart/big"},
		{Event{Agent: "alice", Payload: StatusChanged{Status: registry.StatusIdle, Reason: "resumed"}}, "alice is idle: resumed"},
		{Event{Agent: "alice", Payload: StatusChanged{Status: registry.StatusWorking}}, "alice is working"},
		{Event{Payload: MessageDelivered{From: "lead", To: "alice", Type: "message", Content: "write it\nthen test it"}}, "lead → alice (message): write it …"},
		{Event{Agent: "lead", Payload: Retry{Attempt: 1, Cause: llm.RetryRateLimit, HTTPStatus: 429, Delay: 4 * time.Second, Err: "HTTP 429 Too Many Requests"}},
			"lead: retrying in 4s: HTTP 429 Too Many Requests"},
		{Event{Agent: "alice", Payload: TaskChanged{Change: TaskChangeCompleted, TaskID: "t1", Subject: "build", Unblocks: []string{"t2"}}}, "alice completed t1: build (unblocks t2)"},
		{Event{Agent: "bob", Payload: TaskChanged{Change: TaskChangeReleased, TaskID: "t2", Subject: "test", WasOwner: "bob"}}, "bob released t2: test (was bob's)"},
		{Event{Agent: "alice", Payload: TaskChanged{Change: TaskChangeHandedOver, TaskID: "t1", Subject: "write hello.txt", To: "bob"}}, "alice handed over t1: write hello.txt (to bob)"},
		{Event{Agent: "alice", Payload: TaskChanged{Change: TaskChangeAutoClaimed, TaskID: "t1", Subject: "x"}}, "alice auto-claimed t1: x"},
		{Event{Agent: "alice", Payload: TaskChanged{Change: TaskChangeBlockers, TaskID: "t3", Subject: "x", BlockedBy: []string{"t1", "t2"}}}, "alice set what waits for t3: x (blocked by t1,t2)"},
		{Event{Agent: "slow", Payload: Repair{Status: registry.StatusFailed, Reason: "gone"}}, "slow: repair: gone"},
		{Event{Agent: "lead", Payload: BadLine{Reason: "offset 3: not JSON"}}, "lead: bad_line: offset 3: not JSON"},
		{Event{Agent: "alice", Payload: Failure{Class: ClassModel, Text: "boom"}}, "alice: error: boom"},
		{Event{Payload: Failure{Class: ClassStorage, Text: "disk full"}}, "error: disk full"},
		{Event{Agent: "alice", Payload: ToolCall{Tool: "write_file", Result: "error: outside the workspace", IsError: true}}, "alice: write_file refused: error: outside the workspace"},
		{Event{Agent: "lead", Payload: Answer{Interrupted: true}}, "the lead's turn was interrupted"},
		{Event{Agent: "alice", Payload: Activity{Tool: "bash"}}, "alice: running bash"},
	}
	for _, c := range cases {
		if got := c.e.Sentence(); got != c.want {
			t.Errorf("%s sentence %q, want %q", c.e.Kind(), got, c.want)
		}
	}
}

// TestBriefSaysARetryInWords: the TUI's status line words a retry from its
// cause; any other event is its sentence.
func TestBriefSaysARetryInWords(t *testing.T) {
	retry := Event{Agent: "lead", Payload: Retry{Attempt: 1, Cause: llm.RetryRateLimit, HTTPStatus: 429, Delay: 4 * time.Second, Err: "HTTP 429 Too Many Requests"}}
	if got := retry.Brief(); got != "lead: rate limited, retrying in 4 s" {
		t.Errorf("retry brief %q", got)
	}
	fail := Event{Agent: "alice", Payload: Failure{Class: ClassModel, Text: "boom"}}
	if fail.Brief() != fail.Sentence() {
		t.Errorf("error brief %q, sentence %q", fail.Brief(), fail.Sentence())
	}
}
