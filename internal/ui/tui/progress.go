package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/panel"
	"github.com/agentteam/agentteam/team/event"
)

// Update changes the state for one message, then keeps the progress in
// step: who works since when, each agent's context size, and a tick on its
// way while anybody works.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(panel.TickMsg); ok {
		m.prog.Ticked()
		m.prog.Track(m.leadBusy, m.team.Members)
		return m, m.prog.Tick(m.quitting)
	}
	_, cmd := m.update(msg)
	if b, ok := msg.(bridge.Batch); ok {
		contexts(b, &m.prog)
	}
	m.prog.Track(m.leadBusy, m.team.Members)
	cmds := append(m.cmds, cmd, m.prog.Tick(m.quitting))
	m.cmds = nil
	return m, tea.Batch(cmds...)
}

// contexts takes each agent's context size from its replies: a model
// call's tokens (prompt and completion) are the conversation's size as the
// model saw it. A compaction makes the size unknown until the next reply.
func contexts(b bridge.Batch, p *panel.Progress) {
	for _, it := range b.Items {
		if it.Event == nil {
			continue
		}
		switch pl := it.Event.Payload.(type) {
		case event.Reply:
			if pl.Tokens > 0 {
				p.SetContext(it.Event.Agent, pl.Tokens)
			}
		case event.Compacted:
			p.SetContext(it.Event.Agent, 0)
		}
	}
}
