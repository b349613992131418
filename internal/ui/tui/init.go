package tui

import "github.com/agentteam/agentteam/internal/ui/engine"

// init is /init: the lead is asked to write AGENTS.md, in its own
// conversation, whichever teammate was focused.
func (cm *commander) init() {
	m := cm.m
	m.setFocus("")
	cm.tellLead(engine.InitPrompt)
}
