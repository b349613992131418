package tui

import (
	"github.com/agentteam/agentteam/workspace"
)

// focusName is the agent whose conversation is shown.
func (m *Model) focusName() string {
	if m.focus == "" {
		return workspace.LeadName
	}
	return m.focus
}

// focusModel is the model label of the agent whose conversation is shown.
func (m *Model) focusModel() string {
	if m.focus == "" {
		return m.opts.ModelName
	}
	if i := m.team.Find(m.focus); i >= 0 {
		return m.team.Members[i].Model
	}
	return ""
}
