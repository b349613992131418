package tui

import (
	"github.com/agentteam/agentteam/workspace"
)

// focusName is the agent whose conversation is shown.
func (s *screen) focusName() string {
	m := s.m
	if m.focus == "" {
		return workspace.LeadName
	}
	return m.focus
}

// focusModel is the model label of the agent whose conversation is shown.
func (s *screen) focusModel() string {
	m := s.m
	if m.focus == "" {
		return m.opts.ModelName
	}
	if i := m.team.Find(m.focus); i >= 0 {
		return m.team.Members[i].Model
	}
	return ""
}
