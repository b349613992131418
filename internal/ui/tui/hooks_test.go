package tui

import (
	"testing"

	"github.com/agentteam/agentteam/team/event"
)

// Every hook run is one line in the lead's conversation: what ran, for
// whom, and how it ended.
func TestEveryHookRunIsOneLine(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.HookRun{Event: "PreToolUse", Command: "./guard.sh", Tool: "bash", Decision: "blocked", ExitCode: 2, Text: "no rm here"}},
		event.Event{Agent: "alice", Payload: event.HookRun{Event: "TaskCompleted", Command: "make test", Decision: "failed", ExitCode: -1, Text: "did not finish within 1s and was stopped; the step went on"}},
		event.Event{Agent: "lead", Payload: event.HookRun{Event: "PostToolUse", Command: "./after.sh", Tool: "write_file", Decision: "ok"}},
	))
	hs.mustSee("lead: PreToolUse hook ./guard.sh blocked bash: no rm here",
		"alice: TaskCompleted hook make test did not finish within 1s",
		"lead: PostToolUse hook ./after.sh ran for write_file")
}
