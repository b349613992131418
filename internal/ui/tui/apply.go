package tui

import (
	"strings"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

// apply takes a batch of engine facts, in the order they happened.
func (m *Model) apply(b batchMsg) {
	refresh := false
	for _, it := range b.items {
		if it.delta != nil {
			m.delta(it.delta)
			continue
		}
		if m.event(*it.event) {
			refresh = true
		}
	}
	for agent, what := range b.activity {
		m.team.Activity[agent] = what
		if agent == workspace.LeadName && what != "" {
			m.leadBusy = true
		}
	}
	if refresh {
		m.refreshMate()
	}
}

// delta adds streamed text to the lead's reply in progress, or to the
// focused teammate's.
func (m *Model) delta(d *deltaChunk) {
	var p *convPane
	switch {
	case d.agent == workspace.LeadName:
		p = m.lead
		m.leadBusy = true
	case m.mate != nil && d.agent == m.mate.name:
		p = m.mate.pane
	default:
		return
	}
	e := p.stream
	if e != nil && d.reasoning != "" && e.text != "" && !d.restart {
		settle(p) // thinking after text belongs to the next turn
		e = nil
	}
	if e == nil {
		e = &entry{kind: entryReply, who: d.agent, streaming: true}
		p.add(e)
		p.stream = e
	}
	if d.restart {
		e.text, e.reasoning = "", ""
	}
	e.reasoning += d.reasoning
	e.text += d.text
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
func (m *Model) event(e team.Event) bool {
	isMate := m.mate != nil && involves(e, m.mate.name)
	if m.mate != nil && branchChanged(e, m.mate.name) {
		m.refreshBranch()
	}
	if e.Agent != "" {
		m.agents[e.Agent] = true
	}
	switch p := e.Payload.(type) {
	case team.Intake:
		if e.Agent == workspace.LeadName {
			settle(m.lead)
			m.fromOutside(p.Messages)
		}
	case team.ToolCall:
		w := m.writeEntry(e.Agent, p)
		switch {
		case e.Agent == workspace.LeadName:
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
	case team.Answer:
		m.answer(e, p)
	case team.Failure:
		m.lastErr = e.Brief()
		switch {
		case p.Class == team.ClassBudgetAsk:
			m.budgetAsk = p.Text
		case p.Class == team.ClassBudget:
			m.budgetAsk = ""
		}
		if e.Agent == workspace.LeadName {
			settle(m.lead)
			m.lead.add(&entry{kind: entryError, text: p.Text})
			m.leadIdle()
		}
	case team.Retry:
		m.lastErr = e.Brief()
	case team.Instructions:
		m.instructions[e.Agent] = p.Summary
		if len(p.Notes) > 0 && e.Agent == workspace.LeadName {
			m.lead.add(&entry{kind: entryNote, text: e.Sentence()})
		}
	case team.MessageDelivered:
		// A plan request is shown from its request event, with the plan alone.
		if p.To == workspace.LeadName && p.From != workspace.UserName && p.Type != team.TypePlanApprovalRequest {
			m.lead.add(&entry{kind: entryReport, who: p.From, typ: "lead (" + string(p.Type) + ")", text: p.Content})
		}
	case team.RequestOpened:
		if p.RequestKind == team.RequestPlanApproval {
			m.plans.request(p)
		}
	case team.RequestAnswered:
		if p.RequestKind == team.RequestPlanApproval {
			m.plans.answered(p.RequestRef, p.Outcome, p.By)
		}
	case team.RequestExpired:
		if p.RequestKind == team.RequestPlanApproval {
			m.plans.answered(p.RequestRef, p.Outcome, p.To)
		}
	case team.Permission:
		m.permissionEvent(e, p)
	case team.HookRun:
		// Every run of a hook of the person's is one line in the lead's pane.
		m.lead.add(&entry{kind: entryNote, text: e.Sentence(), isErr: p.Decision == "failed"})
	case team.Spawn:
		if m.team.Find(e.Agent) < 0 {
			m.team.Members = append(m.team.Members, team.Member{Name: e.Agent, Role: p.Role, Status: p.Status})
		}
	case team.StatusChanged:
		if i := m.team.Find(e.Agent); i >= 0 {
			m.team.Members[i].Status = p.Status
		}
		if p.Status != team.StatusWorking {
			delete(m.team.Activity, e.Agent)
		}
	}
	m.replyEvent(e)
	return isMate
}

// replyEvent takes the lead's replies, and in a watch what the running
// process's screen shows from elsewhere: the person's prompts there and
// the lead's replies (a watch has no stream of them).
func (m *Model) replyEvent(e team.Event) {
	watch := m.opts.Watch != ""
	switch p := e.Payload.(type) {
	case team.Prompt:
		if watch {
			settle(m.lead)
			m.lead.add(&entry{kind: entryReport, who: "the person", typ: "lead", text: p.Text})
		}
	case team.Reply:
		if e.Agent != workspace.LeadName {
			return
		}
		m.lastErr = ""
		if watch && strings.TrimSpace(p.Text) != "" {
			m.lead.add(&entry{kind: entryReply, who: workspace.LeadName, text: p.Text})
			m.watchReply = p.Text
		}
	}
}

// involves reports whether an event is about an agent: its own, or a
// message or request it sends or gets.
func involves(e team.Event, name string) bool {
	if e.Agent == name {
		return true
	}
	switch p := e.Payload.(type) {
	case team.MessageDelivered:
		return p.From == name || p.To == name
	case team.RequestOpened:
		return p.From == name || p.To == name
	case team.RequestAnswered:
		return p.From == name || p.To == name
	case team.RequestExpired:
		return p.From == name || p.To == name
	}
	return false
}

// answer ends the lead's cycle: its final reply replaces the streamed text.
func (m *Model) answer(e team.Event, a team.Answer) {
	m.leadIdle()
	delete(m.team.Activity, workspace.LeadName)
	if m.opts.Watch != "" && a.Text == m.watchReply {
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
		m.lead.add(&entry{kind: entryReply, who: workspace.LeadName, text: a.Text})
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
