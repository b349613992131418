package loop

import (
	"errors"
	"time"

	"github.com/agentteam/agentteam/inbox"

	openai "github.com/sashabaranov/go-openai"
)

// EventKind names what an agent reports.
type EventKind string

// Event kinds.
const (
	EventTurn      EventKind = "turn"       // a model call starts
	EventReply     EventKind = "reply"      // the assistant message arrived (Result = its text, Usage)
	EventToolStart EventKind = "tool_start" // a tool call starts (Tool, Args)
	EventToolCall  EventKind = "tool_call"  // a tool call finished and is recorded (Tool, Args, Result, IsError)
	EventInbox     EventKind = "inbox"      // inbox messages were taken into the conversation (MessageIDs)
	EventBadLine   EventKind = "bad_line"   // an inbox line was set aside (Result = the line, Err = why)
	EventCompacted EventKind = "compacted"  // the conversation was shortened to fit the context window (Dropped)
	EventError     EventKind = "error"      // something failed (Err, Source)
)

// ErrorSource is the step of the loop that failed.
type ErrorSource string

// Steps that fail.
const (
	SourceModel   ErrorSource = "model"   // the model call
	SourceInbox   ErrorSource = "inbox"   // taking the inbox in, or marking it read
	SourceSession ErrorSource = "session" // recording the conversation
)

// Event is what an agent reports while it works, for the event log and the TUI.
type Event struct {
	Time               time.Time
	Agent              string
	Kind               EventKind
	Tool, Args, Result string
	Diff               string // EventToolCall: the diff a write made
	IsError            bool
	MessageIDs         []string
	Messages           []inbox.Message // EventInbox: the messages taken in, as they came
	Usage              openai.Usage
	Turn               int
	Err                string
	Source             ErrorSource // EventError: the step that failed
	Dropped            int         // EventCompacted: how many earlier messages
	// Reasoning is an EventReply's thinking, when the model sent some
	// (reasoning_content or reasoning).
	Reasoning string
}

func (a *Agent) emit(e Event) {
	if a.onEvent == nil {
		return
	}
	e.Time = time.Now()
	e.Agent = a.name
	a.onEvent(e)
}

// sourcedError is an error of RunCycle marked with the step that failed;
// it reads as its cause.
type sourcedError struct {
	source ErrorSource
	err    error
	told   bool // an EventError already said it
}

func (e *sourcedError) Error() string { return e.err.Error() }
func (e *sourcedError) Unwrap() error { return e.err }

// sourced marks err (if any) with the step of the loop it came from.
func sourced(source ErrorSource, err error) error {
	if err == nil {
		return nil
	}
	return &sourcedError{source: source, err: err}
}

// told is sourced for an error the loop has just emitted as an EventError.
func told(source ErrorSource, err error) error {
	if err == nil {
		return nil
	}
	return &sourcedError{source: source, err: err, told: true}
}

// Told reports whether every failure in an error of RunCycle was already
// emitted as an EventError, so the caller need not report it again (one
// failure shown twice reads as two).
func Told(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *sourcedError:
		return e.told
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, c := range errs {
			if !Told(c) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return Told(e.Unwrap())
	}
	return false
}

// SourceOf is the step of the loop an error of RunCycle came from, "" if
// it is not a step's failure (a cancelled context, the turn limit).
func SourceOf(err error) ErrorSource {
	var s *sourcedError
	if errors.As(err, &s) {
		return s.source
	}
	return ""
}
