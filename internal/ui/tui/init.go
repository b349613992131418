package tui

import "github.com/agentteam/agentteam/internal/ui/engine"

// initCommand is /init: the lead is asked to write AGENTS.md, in its own
// conversation, whichever teammate was focused.
func (m *Model) initCommand() {
	m.setFocus("")
	m.tellLead(engine.InitPrompt)
}
