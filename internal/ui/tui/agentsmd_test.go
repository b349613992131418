package tui

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team/event"
)

// The status line names the focused agent's AGENTS.md files; a file
// skipped is one sentence in the lead's conversation.
func TestStatusLineNamesTheFocusedAgentsInstructions(t *testing.T) {
	hs := newHarness(t, 140, 30, Options{HasModel: true, Sandbox: "sandbox: on"})
	hs.send(members("alice:idle"))
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.Instructions{Files: []string{"/r/AGENTS.md", "/r/sub/AGENTS.md"}, Summary: "AGENTS.md ×2",
			Notes: []string{"/r/sub/CLAUDE.md is skipped: it is a named pipe (FIFO), not a regular file."}}},
		event.Event{Agent: "alice", Payload: event.Instructions{Files: []string{"/r/CLAUDE.md"}, Summary: "CLAUDE.md"}},
	))
	status := func() string { return colourless(hs.m.scr.statusLine()) }
	if s := status(); !strings.Contains(s, "AGENTS.md ×2 · sandbox: on") {
		t.Fatalf("status line %q", s)
	}
	hs.mustSee("lead reads /r/AGENTS.md, /r/sub/AGENTS.md (/r/sub/CLAUDE.md is skipped:", "pipe (FIFO), not a regular file.)")
	hs.enter("/focus alice")
	if s := status(); !strings.Contains(s, "CLAUDE.md · sandbox: on") || strings.Contains(s, "AGENTS.md") {
		t.Fatalf("status line with alice focused %q", s)
	}
	// Read no more: the status line says nothing of them.
	hs.send(events(event.Event{Agent: "alice", Payload: event.Instructions{}}))
	if s := status(); strings.Contains(s, ".md") {
		t.Fatalf("status line %q", s)
	}
}

// /init asks the lead, in the person's name, for the project's AGENTS.md,
// whichever teammate is focused; the person sees what was said.
func TestInitAsksTheLeadForAgentsMD(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.send(members("alice:idle"))
	hs.enter("/focus alice")
	hs.enter("/init")
	if len(hs.eng.said) != 1 || hs.eng.said[0] != engine.InitPrompt || len(hs.eng.sent) != 0 {
		t.Fatalf("said %q, sent %q", hs.eng.said, hs.eng.sent)
	}
	if hs.m.focus != "" || !hs.m.leadBusy {
		t.Fatalf("focus %q, lead busy %v", hs.m.focus, hs.m.leadBusy)
	}
	hs.mustSee("Write an AGENTS.md file at the root of this project")
}
