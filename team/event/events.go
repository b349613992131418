package event

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// EventKind names what an event is about; each kind has its own payload
// type (payloads.go), and the kind is written as "kind" in events.jsonl.
type EventKind string

// Event kinds written to events.jsonl (activity only reaches the subscriber).
const (
	EventSpawn           EventKind = "spawn"
	EventStatus          EventKind = "status"
	EventMessage         EventKind = "message"
	EventToolCall        EventKind = "tool_call"
	EventReply           EventKind = "reply"
	EventAnswer          EventKind = "answer" // the lead's reply to the person at the end of a chat cycle
	EventRetry           EventKind = "retry"
	EventError           EventKind = "error"
	EventBadLine         EventKind = "bad_line"
	EventRepair          EventKind = "repair"
	EventSettled         EventKind = "settled"
	EventTask            EventKind = "task" // a change on the task board
	EventCompacted       EventKind = "compacted"
	EventInstructions    EventKind = "instructions" // the AGENTS.md files an agent reads changed
	EventHandoff         EventKind = "handoff"      // a change of one side's handoff state
	EventRequestOpened   EventKind = "request_opened"
	EventRequestAnswered EventKind = "request_answered"
	EventRequestExpired  EventKind = "request_expired"
	EventWorktree        EventKind = "worktree"   // a teammate's git worktree: made, merged, conflicted, removed, kept
	EventPermission      EventKind = "permission" // a tool call allowed or denied (team/permgate)
	EventHook            EventKind = "hook"       // one run of a hook command of the person's (hooks.go)
	EventPrompt          EventKind = "prompt"     // what the person said to the lead in the process that runs it
	EventActivity        EventKind = "activity"   // what an agent does now; not written to the log
	EventIntake          EventKind = "intake"     // messages an agent took into its conversation; not written to the log
)

// Event is one line of the team-wide event log: when, which agent it is
// about (empty for the team as a whole), and what happened, whose type
// says the kind. Its JSON is one flat object (eventjson.go).
type Event struct {
	Time    time.Time
	Agent   string
	Payload Payload
}

// Payload is what an event says; every kind has one payload type.
type Payload interface {
	Kind() EventKind
}

// Kind is the kind of the event's payload, "" without one.
func (e Event) Kind() EventKind {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.Kind()
}

// EventLog appends events to events.jsonl (or another store's lines) and
// hands them to a subscriber.
type EventLog struct {
	app  EventLines // events.jsonl: events emitted together share one write
	name string     // the log in a sentence
	sub  func(Event)
	// onWriteError sees every failed write of the log (the team stops on a full disk).
	onWriteError func(error)
	failed       atomic.Bool // a write failed and the subscriber was told
}

// OnWriteError makes fn see every failed write of the log.
func (l *EventLog) OnWriteError(fn func(error)) { l.onWriteError = fn }

// NewEventLog writes to path; sub (may be nil) sees every event after it is written.
func NewEventLog(path string, sub func(Event)) *EventLog {
	return &EventLog{app: statefile.NewAppender(path), name: "events.jsonl", sub: sub}
}

// NewEventLogTo writes to lines, another store than the file (a stream in
// internal/store/natsstore); sub as for NewEventLog.
func NewEventLogTo(lines EventLines, sub func(Event)) *EventLog {
	return &EventLog{app: lines, name: "the event log", sub: sub}
}

// Emit records e. A failure to write the log is not fatal to the team: the
// event still reaches the subscriber, with the write error noted.
func (l *EventLog) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	e.Payload = clipPayload(e.Payload)
	data, err := json.Marshal(e)
	if err == nil {
		// An event is told, not awaited: its emitter gives no ctx, and the
		// line is kept for the log's readers whatever the emitter does next.
		err = l.app.AppendLine(context.Background(), data)
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
	l.Notify(Event{Payload: Failure{Class: ClassStorage, Text: l.name + " is not being written: " + err.Error()}})
}

// Failed reports whether the last write failed, for a caller without a subscriber.
func (l *EventLog) Failed() bool { return l.failed.Load() }

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

// Limits on the text an event keeps: a tool call's arguments, and its
// longest text (a message, a result, a reply, a plan).
const (
	maxEventArgs = 2000
	MaxText      = 4000
	maxEventDiff = 64 << 10 // a write's diff: a person reviews it from the log
)

// clipPayload shortens the long texts of a payload, so one line of the log stays small.
func clipPayload(p Payload) Payload {
	switch p := p.(type) {
	case MessageDelivered:
		p.Content = Clip(p.Content, MaxText)
		return p
	case ToolCall:
		p.Args, p.Result = Clip(p.Args, maxEventArgs), Clip(p.Result, MaxText)
		return p
	case Reply:
		p.Text, p.Reasoning = Clip(p.Text, MaxText), Clip(p.Reasoning, MaxText)
		return p
	case Answer:
		p.Text = Clip(p.Text, MaxText)
		return p
	case Prompt:
		p.Text = Clip(p.Text, MaxText)
		return p
	case Settled:
		p.Final = Clip(p.Final, MaxText)
		return p
	case Failure:
		p.Text = Clip(p.Text, MaxText)
		return p
	case BadLine:
		p.Reason, p.Line = Clip(p.Reason, MaxText), Clip(p.Line, maxEventArgs)
		return p
	case RequestOpened:
		p.Text = Clip(p.Text, MaxText)
		return p
	case RequestAnswered:
		p.Reason = Clip(p.Reason, MaxText)
		return p
	case RequestExpired:
		p.Reason = Clip(p.Reason, MaxText)
		return p
	case Permission:
		p.Subject, p.Why, p.Diff = Clip(p.Subject, maxEventArgs), Clip(p.Why, MaxText), Clip(p.Diff, maxEventDiff)
		return p
	case StatusChanged:
		p.Reason = Clip(p.Reason, MaxText)
		return p
	case Retry:
		p.Err = Clip(p.Err, MaxText)
		return p
	case HandoffChanged:
		p.Task, p.Reason = Clip(p.Task, maxEventArgs), Clip(p.Reason, MaxText)
		return p
	case HookRun:
		p.Command, p.Text = Clip(p.Command, maxEventArgs), Clip(p.Text, MaxText)
		return p
	}
	return p
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// EventLines is where the event log's lines go: the file events.jsonl
// (statefile.Appender, the default) or a stream (natsstore.EventLog). Each
// call stores one whole JSON line (without its newline) or fails; called
// with ctx done, it stores nothing.
type EventLines interface {
	AppendLine(ctx context.Context, data []byte) error
}

// Sink is the event log as its writers use it: Emit records an event (and
// hands it to the subscriber); Notify only hands it on.
type Sink interface {
	Emit(Event)
	Notify(Event)
}
