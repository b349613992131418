package team

import (
	"encoding/json"
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
	if data, err := json.Marshal(e); err == nil {
		if werr := inbox.AppendLine(l.path, data); werr != nil && e.Kind != EventError {
			e.Detail += " (events.jsonl not written: " + werr.Error() + ")"
		}
	}
	if l.sub != nil {
		l.sub(e)
	}
}

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
