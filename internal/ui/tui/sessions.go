package tui

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team/sessions"
)

// sessionSwitchedMsg is the lead's conversation after /sessions ID.
type sessionSwitchedMsg struct {
	note string
	msgs []openai.ChatCompletionMessage
	list []sessions.Info // the sessions after the switch, for completion
}

// sessionsListedMsg is /sessions alone: the list as a note, and the ids
// kept for completing /sessions ID.
type sessionsListedMsg struct {
	text string
	list []sessions.Info
}

// sessionList is the lead's earlier conversations /sessions last
// listed, offered when /sessions ID is completed.
type sessionList struct {
	list []sessions.Info
}

// keep takes a listing; nil keeps the last.
func (l *sessionList) keep(list []sessions.Info) {
	if list != nil {
		l.list = list
	}
}

// items are the earlier conversations offered for /sessions ID.
func (l *sessionList) items(prefix string) []popItem {
	var out []popItem
	for _, s := range l.list {
		if !s.Current && strings.HasPrefix(s.ID, prefix) {
			out = append(out, popItem{label: s.ID, desc: s.Title, value: s.ID, final: true})
		}
	}
	return out
}

// switched shows the conversation switched to in place of the lead's.
func (p *convPane) switched(s sessionSwitchedMsg) {
	p.clear()
	p.restore(s.msgs)
	p.add(&entry{kind: entryNote, text: s.note})
	p.follow = true
}
