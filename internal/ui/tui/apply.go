package tui

import (
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

// eventSink takes the engine's facts into the panes, in the order they
// happened: streamed text, tool calls, answers, requests, statuses.
type eventSink struct {
	m *Model
	// agents are the names this screen has seen act (events of this
	// process): their messages reach the lead's conversation as events.
	agents map[string]bool
	// watchReply is the lead's last reply a watch showed (Options.Watch).
	watchReply string
}

// apply takes a batch of engine facts, in the order they happened.
func (s *eventSink) apply(b bridge.Batch) {
	m := s.m
	refresh := false
	for _, it := range b.Items {
		if it.Delta != nil {
			s.delta(it.Delta)
			continue
		}
		if s.event(*it.Event) {
			refresh = true
		}
	}
	for agent, what := range b.Activity {
		m.team.Activity[agent] = what
		if agent == inbox.LeadName && what != "" {
			m.leadBusy = true
		}
	}
	if refresh {
		m.refreshMate()
	}
}

// delta adds streamed text to the lead's reply in progress, or to the
// focused teammate's.
func (s *eventSink) delta(d *bridge.Chunk) {
	m := s.m
	var p *convPane
	switch {
	case d.Agent == inbox.LeadName:
		p = m.lead
		m.leadBusy = true
	case m.mate != nil && d.Agent == m.mate.name:
		p = m.mate.pane
	default:
		return
	}
	e := p.stream
	if e != nil && d.Reasoning != "" && e.text != "" && !d.Restart {
		settle(p) // thinking after text belongs to the next turn
		e = nil
	}
	if e == nil {
		e = &entry{kind: entryReply, who: d.Agent, streaming: true}
		p.add(e)
		p.stream = e
	}
	if d.Restart {
		e.text, e.reasoning = "", ""
	}
	e.reasoning += d.Reasoning
	e.text += d.Text
}

// settle ends a streaming reply: kept if it has text, dropped if not.
func settle(p *convPane) {
	e := p.stream
	if e == nil {
		return
	}
	p.stream = nil
	e.streaming = false
	e.invalidate()
	if e.text == "" && strings.TrimSpace(e.reasoning) == "" {
		p.remove(e)
	}
}

// event takes one engine event; it reports whether the focused teammate's
// conversation changed.
func (s *eventSink) event(e event.Event) bool {
	m := s.m
	isMate := m.mate != nil && involves(e, m.mate.name)
	if m.mate != nil && branchChanged(e, m.mate.name) {
		m.mate.refreshBranch(m)
	}
	if e.Agent != "" {
		s.agents[e.Agent] = true
	}
	switch p := e.Payload.(type) {
	case event.Intake:
		if e.Agent == inbox.LeadName {
			settle(m.lead)
			s.fromOutside(p.Messages)
		}
	case event.ToolCall:
		w := m.writes.entry(e.Agent, p, m.team, m.mate)
		switch {
		case e.Agent == inbox.LeadName:
			settle(m.lead)
			if w == nil {
				w = &entry{kind: entryTool, tool: p.Tool, arg: engine.KeyArg(p.Tool, p.Args), done: true, isErr: p.IsError, text: p.Result}
			}
			m.lead.add(w)
		case w != nil:
			// A teammate's write shows in the lead's conversation too, marked with its name.
			w.who = e.Agent
			m.lead.add(w)
		}
	case event.Answer:
		s.answer(e, p)
	case event.Failure:
		m.lastErr = e.Brief()
		m.ask.failure(p)
		if e.Agent == inbox.LeadName {
			settle(m.lead)
			m.lead.add(&entry{kind: entryError, text: p.Text})
			m.leadIdle()
		}
	case event.Retry:
		m.lastErr = e.Brief()
	case event.Instructions:
		m.instructions[e.Agent] = p.Summary
		if len(p.Notes) > 0 && e.Agent == inbox.LeadName {
			m.lead.add(&entry{kind: entryNote, text: e.Sentence()})
		}
	case event.MessageDelivered:
		// A plan request is shown from its request event, with the plan alone.
		if p.To == inbox.LeadName && p.From != inbox.UserName && p.Type != protocol.TypePlanApprovalRequest {
			m.lead.add(&entry{kind: entryReport, who: p.From, typ: "lead (" + string(p.Type) + ")", text: p.Content})
		}
	case event.RequestOpened:
		if p.RequestKind == event.RequestPlanApproval {
			m.plans.request(p)
		}
	case event.RequestAnswered:
		if p.RequestKind == event.RequestPlanApproval {
			m.plans.answered(p.RequestRef, p.Outcome, p.By)
		}
	case event.RequestExpired:
		if p.RequestKind == event.RequestPlanApproval {
			m.plans.answered(p.RequestRef, p.Outcome, p.To)
		}
	case event.Permission:
		m.ask.event(e, p)
	case event.HookRun:
		// Every run of a hook of the person's is one line in the lead's pane.
		m.lead.add(&entry{kind: entryNote, text: e.Sentence(), isErr: p.Decision == "failed"})
	case event.Spawn:
		if m.team.Find(e.Agent) < 0 {
			m.team.Members = append(m.team.Members, registry.Member{Name: e.Agent, Role: p.Role, Status: p.Status})
		}
	case event.StatusChanged:
		if i := m.team.Find(e.Agent); i >= 0 {
			m.team.Members[i].Status = p.Status
		}
		if p.Status != registry.StatusWorking {
			delete(m.team.Activity, e.Agent)
		}
	}
	s.replyEvent(e)
	return isMate
}

// replyEvent takes the lead's replies, and in a watch what the running
// process's screen shows from elsewhere: the person's prompts there and
// the lead's replies (a watch has no stream of them).
func (s *eventSink) replyEvent(e event.Event) {
	m := s.m
	watch := m.opts.Watch != ""
	switch p := e.Payload.(type) {
	case event.Prompt:
		if watch {
			settle(m.lead)
			m.lead.add(&entry{kind: entryReport, who: "the person", typ: "lead", text: p.Text})
		}
	case event.Reply:
		if e.Agent != inbox.LeadName {
			return
		}
		m.lastErr = ""
		if watch && strings.TrimSpace(p.Text) != "" {
			m.lead.add(&entry{kind: entryReply, who: inbox.LeadName, text: p.Text})
			s.watchReply = p.Text
		}
	}
}

// involves reports whether an event is about an agent: its own, or a
// message or request it sends or gets.
func involves(e event.Event, name string) bool {
	if e.Agent == name {
		return true
	}
	switch p := e.Payload.(type) {
	case event.MessageDelivered:
		return p.From == name || p.To == name
	case event.RequestOpened:
		return p.From == name || p.To == name
	case event.RequestAnswered:
		return p.From == name || p.To == name
	case event.RequestExpired:
		return p.From == name || p.To == name
	}
	return false
}

// answer ends the lead's cycle: its final reply replaces the streamed text.
func (s *eventSink) answer(e event.Event, a event.Answer) {
	m := s.m
	m.leadIdle()
	delete(m.team.Activity, inbox.LeadName)
	if m.opts.Watch != "" && a.Text == s.watchReply {
		a.Text = "" // a watch showed it from its reply
	}
	last := m.lead.stream
	streaming := last != nil
	switch {
	case a.Interrupted:
		settle(m.lead)
		m.lead.add(&entry{kind: entryNote, text: "(" + e.Sentence() + ")"})
	case streaming:
		if a.Text != "" {
			last.text = a.Text
		}
		settle(m.lead)
	case a.Text != "":
		m.lead.add(&entry{kind: entryReply, who: inbox.LeadName, text: a.Text})
	}
	m.lastErr = ""
}

// interruptingHint is shown from esc until the lead's turn has ended.
const interruptingHint = "interrupting the lead's turn…"

// leadIdle marks the lead's turn over; the hint that it is being
// interrupted goes with it.
func (m *Model) leadIdle() {
	m.leadBusy = false
	if m.hint == interruptingHint {
		m.hint = ""
	}
}

// fromOutside shows in the lead's conversation, where the lead took them
// in (its intake event comes before the turn that answers them), the
// messages that no agent of this process sent: a person's, typed with
// `agentteam send --to lead` in another terminal (or /send lead here).
// Agents' messages come as events, and are shown from those.
func (s *eventSink) fromOutside(msgs []inbox.Message) {
	m := s.m
	for _, msg := range msgs {
		if msg.To != inbox.LeadName || msg.From == inbox.LeadName || s.agents[msg.From] || m.team.Find(msg.From) >= 0 {
			continue
		}
		m.lead.add(&entry{kind: entryReport, who: msg.From, typ: "lead (" + string(msg.Type) + ")", text: msg.Content})
	}
}
