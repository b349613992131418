package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team/registry"
)

// commander puts what the person typed to work: a slash command, a
// message to the lead or to a teammate's inbox with its attachments. The
// state changes here, the IO in jobs.
type commander struct {
	m *Model
}

// command runs a slash command: the state changes here, the IO in a job.
func (cm *commander) command(c engine.Command) {
	m := cm.m
	switch c.Name {
	case "/help":
		m.note(noteMsg{text: helpText()})
	case "/quit", "/exit":
		m.quitting = true
	case "/clear":
		m.pane().clear()
	case "/init":
		cm.init()
	case "/reasoning":
		on, err := engine.Toggle(c.Name, c.Rest, m.r.thinking)
		if err != nil {
			m.note(noteMsg{text: err.Error(), isErr: true})
			return
		}
		m.r.thinking = !on
		m.hint = m.r.toggleThinking()
	case "/diffs":
		cm.diffs(c)
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
		cm.focus(c.Rest)
	case "/copy":
		cm.copy()
	case "/mouse":
		cm.mouse(c)
	default:
		cm.engine(c)
	}
}

// focus is /focus [name]: a teammate's conversation, or the lead's.
func (cm *commander) focus(name string) {
	m := cm.m
	name = strings.TrimSpace(name)
	if name == "" || name == inbox.LeadName {
		m.setFocus("")
		return
	}
	if m.team.Find(name) < 0 {
		m.note(noteMsg{text: fmt.Sprintf("no teammate is named %s: /team lists them", name), isErr: true})
		return
	}
	m.setFocus(name)
}

// engine runs a command whose work is the engine's, in a job.
func (cm *commander) engine(c engine.Command) {
	m := cm.m
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
			msgs, _ := m.eng.Conversation(inbox.LeadName)
			return sessionSwitchedMsg{note: r.Text, msgs: msgs, list: r.Sessions}
		case r.Sessions != nil:
			return sessionsListedMsg{text: r.Text, list: r.Sessions}
		case r.Hint:
			return hintMsg(r.Text)
		}
		return noteMsg{text: r.Text}
	})
}

// submit sends what was typed: a slash command, to the lead, or to the focused teammate's inbox.
func (cm *commander) submit() {
	m := cm.m
	text := m.in.submit()
	if text == "" {
		return
	}
	m.scr.help = false
	if strings.HasPrefix(text, "/") {
		cm.command(engine.ParseCommand(text))
		return
	}
	if m.mate != nil {
		// No echo here: the message shows in the feed now, and in the
		// conversation once the teammate takes it from its inbox.
		to := m.mate.name
		m.hint = "sending to " + to + "'s inbox…"
		sent := "sent to " + to + "'s inbox"
		if i := m.team.Find(to); i >= 0 {
			switch st := m.team.Members[i].Status; st {
			case registry.StatusShutdown, registry.StatusFailed:
				// Kept for a teammate spawned again under the name, but nobody reads it now.
				sent += fmt.Sprintf(", but %s is %s: nobody reads it unless %s is spawned again", to, st, to)
			}
		}
		cm.sendToMate(to, text, sent)
		return
	}
	cm.tellLead(text)
}

// tellLead shows the person's text in the lead's conversation and sends it
// to the lead, with the files its @paths name.
func (cm *commander) tellLead(text string) {
	m := cm.m
	user := &entry{kind: entryUser, text: text}
	m.lead.add(user)
	m.lead.toEnd()
	if !m.opts.HasModel {
		m.lead.add(&entry{kind: entryError, text: noModelText(m.opts.KeyEnv)})
		return
	}
	m.leadBusy = m.opts.Watch == "" // a watched lead answers when it reads its inbox
	cm.sayToLead(user, text)
}

// noModelText answers a message to the lead when there is no model.
func noModelText(keyEnv string) string {
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	return "The lead has no model to answer with. Set " + keyEnv + " (export " + keyEnv + "=<your key>" + baseURLHint(keyEnv) +
		") and start agentteam chat again, or run agentteam chat --demo " +
		"to try the offline demo model. /team, /inbox, /send, /spawn, /approve, /reject, /shutdown and /tasks work meanwhile."
}
