package tui

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team"
)

// sessionSwitchedMsg is the lead's conversation after /sessions ID.
type sessionSwitchedMsg struct {
	note string
	msgs []openai.ChatCompletionMessage
	list []team.SessionInfo // the sessions after the switch, for completion
}

// sessionsListedMsg is /sessions alone: the list as a note, and the ids
// kept for completing /sessions ID.
type sessionsListedMsg struct {
	text string
	list []team.SessionInfo
}

// sessionItems are the earlier conversations offered for /sessions ID.
func (m *Model) sessionItems(prefix string) []popItem {
	var out []popItem
	for _, s := range m.sessions {
		if !s.Current && strings.HasPrefix(s.ID, prefix) {
			out = append(out, popItem{label: s.ID, desc: s.Title, value: s.ID, final: true})
		}
	}
	return out
}

// sessionSwitched shows the conversation switched to in place of the lead's pane.
func (m *Model) sessionSwitched(s sessionSwitchedMsg) {
	if s.list != nil {
		m.sessions = s.list
	}
	m.lead.clear()
	m.history(historyMsg{msgs: s.msgs})
	m.lead.add(&entry{kind: entryNote, text: s.note})
	m.lead.follow = true
}
