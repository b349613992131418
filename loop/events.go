package loop

import (
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Event kinds.
const (
	EventTurn      = "turn"       // a model call starts
	EventReply     = "reply"      // the assistant message arrived (Result = its text, Usage)
	EventToolStart = "tool_start" // a tool call starts (Tool, Args)
	EventToolCall  = "tool_call"  // a tool call finished and is recorded (Tool, Args, Result, IsError)
	EventInbox     = "inbox"      // inbox messages were taken into the conversation (MessageIDs)
	EventBadLine   = "bad_line"   // an inbox line was set aside (Result = the line, Err = why)
	EventCompacted = "compacted"  // the conversation was shortened to fit the context window
	EventError     = "error"      // something failed (Err)
)

// Event is what an agent reports while it works, for the event log and the TUI.
type Event struct {
	Time               time.Time
	Agent, Kind        string
	Tool, Args, Result string
	IsError            bool
	MessageIDs         []string
	Usage              openai.Usage
	Turn               int
	Err                string
}

func (a *Agent) emit(e Event) {
	if a.onEvent == nil {
		return
	}
	e.Time = time.Now()
	e.Agent = a.name
	a.onEvent(e)
}
