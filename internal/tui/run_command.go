package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentteam/agentteam/workspace"
)

// command runs a slash command: the state changes here, the IO in a job.
func (m *Model) command(c command) {
	switch c.name {
	case "/help":
		m.note(noteMsg{text: helpText()})
	case "/allow", "/always", "/deny":
		m.permissionCommand(c)
	case "/quit", "/exit":
		m.quitting = true
	case "/clear":
		m.pane().clear()
	case "/reasoning":
		switch strings.ToLower(c.rest) {
		case "on":
			m.r.thinking = false
		case "off":
			m.r.thinking = true
		case "":
		default:
			m.note(noteMsg{text: "/reasoning takes on or off", isErr: true})
			return
		}
		m.toggleThinking()
	case "/diffs":
		m.diffsCommand(c)
	case "/auto":
		switch strings.ToLower(c.rest) {
		case "on":
			m.auto = true
		case "off":
			m.auto = false
		case "":
			m.auto = !m.auto
		default:
			m.note(noteMsg{text: "/auto takes on or off", isErr: true})
			return
		}
		on := m.auto
		m.do(func() tea.Msg { m.eng.SetAuto(on); return nil })
		if on {
			m.hint = "auto on: the lead wakes by itself when teammates report"
		} else {
			m.hint = "auto off: the lead answers only you; reports wait in its inbox"
		}
	case "/team":
		m.do(func() tea.Msg {
			text, err := m.eng.Describe(m.ctx)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return noteMsg{text: text}
		})
	case "/inbox":
		name := c.rest
		m.do(func() tea.Msg {
			text, err := m.eng.Inbox(name)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return noteMsg{text: text}
		})
	case "/send":
		args := c.split(2)
		if len(args) < 2 {
			m.note(noteMsg{text: "usage: /send name text", isErr: true})
			return
		}
		to, text := args[0], args[1]
		m.do(func() tea.Msg {
			if err := m.eng.Send(m.ctx, to, text); err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return hintMsg("sent to " + to + "'s inbox")
		})
	case "/broadcast":
		if c.rest == "" {
			m.note(noteMsg{text: "usage: /broadcast text", isErr: true})
			return
		}
		text := c.rest
		m.do(func() tea.Msg {
			reached, err := m.eng.Broadcast(m.ctx, text)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return hintMsg("broadcast to " + strings.Join(reached, ", "))
		})
	case "/spawn":
		m.spawn(c)
	case "/approve":
		m.review(c, true)
	case "/reject":
		m.review(c, false)
	case "/shutdown":
		m.shutdown(c)
	case "/focus":
		m.focusCommand(c.rest)
	case "/merge":
		name := strings.TrimSpace(c.rest)
		if name == "" || strings.Contains(name, " ") {
			m.note(noteMsg{text: "usage: /merge name", isErr: true})
			return
		}
		m.do(func() tea.Msg {
			text, err := m.eng.Merge(m.ctx, name)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return noteMsg{text: text}
		})
	case "/diff":
		name := strings.TrimSpace(c.rest)
		if name == "" {
			name = m.focus
		}
		if name == "" || strings.Contains(name, " ") {
			m.note(noteMsg{text: "usage: /diff name (or focus a teammate and /diff)", isErr: true})
			return
		}
		m.do(func() tea.Msg {
			text, err := m.eng.Diff(m.ctx, name)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return noteMsg{text: text}
		})
	case "/model":
		m.switchModel(c)
	case "/copy":
		m.copyCommand()
	case "/mouse":
		m.mouseCommand(c)
	case "/sessions":
		m.sessionsCommand()
	case "/tasks":
		m.do(func() tea.Msg {
			text, err := m.eng.Tasks(m.ctx)
			if err != nil {
				return noteMsg{text: err.Error(), isErr: true}
			}
			return noteMsg{text: text}
		})
	default:
		m.note(noteMsg{text: fmt.Sprintf("unknown command %s: /help lists the commands", c.name), isErr: true})
	}
}

// focusCommand is /focus [name]: a teammate's conversation, or the lead's.
func (m *Model) focusCommand(name string) {
	name = strings.TrimSpace(name)
	if name == "" || name == workspace.LeadName {
		m.setFocus("")
		return
	}
	if m.findMember(name) < 0 {
		m.note(noteMsg{text: fmt.Sprintf("no teammate is named %s: /team lists them", name), isErr: true})
		return
	}
	m.setFocus(name)
}
