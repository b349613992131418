package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/workspace"
)

// command runs a slash command: the state changes here, the IO in a job.
func (m *Model) command(c engine.Command) {
	switch c.Name {
	case "/help":
		m.note(noteMsg{text: helpText()})
	case "/quit", "/exit":
		m.quitting = true
	case "/clear":
		m.pane().clear()
	case "/init":
		m.initCommand()
	case "/reasoning":
		on, err := engine.Toggle(c.Name, c.Rest, m.r.thinking)
		if err != nil {
			m.note(noteMsg{text: err.Error(), isErr: true})
			return
		}
		m.r.thinking = !on
		m.hint = m.r.toggleThinking()
	case "/diffs":
		m.diffsCommand(c)
	case "/auto":
		on, err := engine.Toggle(c.Name, c.Rest, m.auto)
		if err != nil {
			m.note(noteMsg{text: err.Error(), isErr: true})
			return
		}
		m.auto = on
		m.do(func() tea.Msg { m.eng.SetAuto(on); return nil })
		m.hint = engine.AutoWords(on)
	case "/focus":
		m.focusCommand(c.Rest)
	case "/copy":
		m.copyCommand()
	case "/mouse":
		m.mouseCommand(c)
	default:
		m.engineCommand(c)
	}
}

// focusCommand is /focus [name]: a teammate's conversation, or the lead's.
func (m *Model) focusCommand(name string) {
	name = strings.TrimSpace(name)
	if name == "" || name == workspace.LeadName {
		m.setFocus("")
		return
	}
	if m.team.Find(name) < 0 {
		m.note(noteMsg{text: fmt.Sprintf("no teammate is named %s: /team lists them", name), isErr: true})
		return
	}
	m.setFocus(name)
}

// engineCommand runs a command whose work is the engine's, in a job.
func (m *Model) engineCommand(c engine.Command) {
	firstAsk := ""
	if len(m.ask.asks) > 0 {
		firstAsk = m.ask.asks[0].id
	}
	call, err := engine.CommandCall(c, m.focus, firstAsk)
	switch {
	case err != nil:
		m.note(noteMsg{text: err.Error(), isErr: true})
		return
	case call == nil:
		m.note(noteMsg{text: fmt.Sprintf("unknown command %s: /help lists the commands", c.Name), isErr: true})
		return
	}
	if c.Name == "/allow" || c.Name == "/always" || c.Name == "/deny" {
		m.hint = "answering…"
	}
	m.do(func() tea.Msg {
		r, err := call(m.ctx, m.eng)
		switch {
		case err != nil:
			return noteMsg{text: err.Error(), isErr: true}
		case r.Model != "":
			return modelMsg(r.Model)
		case r.Session != "":
			msgs, _ := m.eng.Conversation(workspace.LeadName)
			return sessionSwitchedMsg{note: r.Text, msgs: msgs, list: r.Sessions}
		case r.Sessions != nil:
			return sessionsListedMsg{text: r.Text, list: r.Sessions}
		case r.Hint:
			return hintMsg(r.Text)
		}
		return noteMsg{text: r.Text}
	})
}
