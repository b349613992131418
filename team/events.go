package team

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// Event kinds written to events.jsonl.
const (
	EventSpawn    = "spawn"
	EventStatus   = "status"
	EventMessage  = "message"
	EventToolCall = "tool_call"
	EventReply    = "reply"
	EventRetry    = "retry"
	EventBadLine  = "bad_line"
	EventError    = "error"
	EventRepair   = "repair"
	EventSettled  = "settled"
	// EventActivity says what an agent does now (thinking, running bash); not written to the log.
	EventActivity  = "activity"
	EventCompacted = "compacted"
	// EventAnswer is the lead's reply to the person at the end of a cycle.
	EventAnswer = "answer"
	EventTask   = "task" // a change on the task board: "alice claimed t3: …"
)

// Event is one line of the team-wide event log.
type Event struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Agent     string    `json:"agent,omitempty"`
	Role      string    `json:"role,omitempty"`
	Status    string    `json:"status,omitempty"`
	From      string    `json:"from,omitempty"`
	To        string    `json:"to,omitempty"`
	Type      string    `json:"type,omitempty"`
	MessageID string    `json:"message_id,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Args      string    `json:"args,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	IsError   bool      `json:"is_error,omitempty"`
	Turn      int       `json:"turn,omitempty"`
	Tokens    int       `json:"tokens,omitempty"`
	PID       int       `json:"pid,omitempty"`
}

// EventLog appends events to events.jsonl and hands them to a subscriber.
type EventLog struct {
	path string
	sub  func(Event)
	// onWriteError sees every failed write of the log (the team stops on a full disk).
	onWriteError func(error)
	failed       atomic.Bool // a write failed and the subscriber was told
}

// NewEventLog writes to path; sub (may be nil) sees every event after it is written.
func NewEventLog(path string, sub func(Event)) *EventLog {
	return &EventLog{path: path, sub: sub}
}

// Emit records e. A failure to write the log is not fatal to the team: the
// event still reaches the subscriber, with the write error noted.
func (l *EventLog) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	e.Args = clip(e.Args, 2000)
	e.Detail = clip(e.Detail, 4000)
	data, err := json.Marshal(e)
	if err == nil {
		err = inbox.AppendLine(l.path, data)
	}
	if l.sub != nil {
		l.sub(e)
	}
	if err != nil {
		l.writeFailed(err)
	} else {
		l.failed.Store(false)
	}
}

// writeFailed tells the subscriber, once until a write succeeds again, that
// the log is not being written, so no failure goes unseen.
func (l *EventLog) writeFailed(err error) {
	if l.onWriteError != nil {
		l.onWriteError(err)
	}
	if l.failed.Swap(true) {
		return
	}
	l.Notify(Event{Kind: EventError, Detail: "events.jsonl is not being written: " + err.Error(), IsError: true})
}

// Failed reports whether the last write failed, for a caller without a subscriber.
func (l *EventLog) Failed() bool { return l.failed.Load() }

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Notify hands e to the subscriber only: for frequent, passing facts
// (what an agent does this second) that the log does not need.
func (l *EventLog) Notify(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if l.sub != nil {
		l.sub(e)
	}
}
