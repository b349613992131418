package team

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
)

// Conversation is a copy of an agent's conversation (the lead's or a
// teammate's run by this process), for the TUI to show read-only. ok is
// false for a name this process does not run.
func (t *Team) Conversation(name string) ([]openai.ChatCompletionMessage, bool) {
	if name == inbox.LeadName {
		return t.lead.Messages(), true
	}
	t.roster.mu.Lock()
	m, ok := t.roster.members[name]
	t.roster.mu.Unlock()
	if !ok {
		return nil, false
	}
	return m.agent.Messages(), true
}

// MaxWorkers is the size of the worker pool.
func (t *Team) MaxWorkers() int { return t.opts.MaxWorkers }
