package tui

import (
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
		m.team.activity[agent] = what
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
	e := p.last()
	if e == nil || !e.streaming {
		e = &entry{kind: entryReply, who: d.agent, streaming: true}
		p.add(e)
	}
	if d.restart {
		e.text = ""
	}
	e.text += d.text
}

// settle ends a streaming reply: kept if it has text, dropped if not.
func settle(p *convPane) {
	e := p.last()
	if e == nil || !e.streaming {
		return
	}
	e.streaming = false
	e.invalidate()
	if e.text == "" {
		p.entries = p.entries[:len(p.entries)-1]
	}
}

// event takes one engine event; it reports whether the focused teammate's
// conversation changed.
func (m *Model) event(e team.Event) bool {
	isMate := m.mate != nil && (e.Agent == m.mate.name || e.To == m.mate.name || e.From == m.mate.name)
	switch e.Kind {
	case team.EventToolCall:
		if e.Agent == workspace.LeadName {
			settle(m.lead)
			m.lead.add(&entry{kind: entryTool, tool: e.Tool, arg: keyArg(e.Tool, e.Args), done: true, isErr: e.IsError, text: e.Detail})
		}
	case team.EventAnswer:
		m.answer(e)
	case team.EventError:
		m.lastErr = e.Agent + ": " + firstLine(e.Detail, 200)
		if e.Agent == workspace.LeadName {
			settle(m.lead)
			m.lead.add(&entry{kind: entryError, text: e.Detail})
			m.leadBusy = false
		}
	case team.EventRetry:
		m.lastErr = e.Agent + ": " + e.Detail
	case team.EventMessage:
		switch {
		case e.To == workspace.LeadName && e.Type == team.TypePlanApprovalRequest:
			m.planRequest(e)
		case e.To == workspace.LeadName && e.From != workspace.UserName:
			m.lead.add(&entry{kind: entryReport, who: e.From, typ: "lead (" + e.Type + ")", text: e.Detail})
		case e.Type == team.TypePlanApprovalResponse:
			m.planAnswered(e)
		}
	case team.EventSpawn:
		if m.findMember(e.Agent) < 0 {
			m.team.members = append(m.team.members, team.Member{Name: e.Agent, Role: e.Role, Status: e.Status})
		}
	case team.EventStatus:
		if i := m.findMember(e.Agent); i >= 0 {
			m.team.members[i].Status = e.Status
		}
		if e.Status != team.StatusWorking {
			delete(m.team.activity, e.Agent)
		}
	case team.EventReply:
		if e.Agent == workspace.LeadName {
			m.lastErr = ""
		}
	}
	return isMate
}

// answer ends the lead's cycle: its final reply replaces the streamed text.
func (m *Model) answer(e team.Event) {
	m.leadBusy = false
	delete(m.team.activity, workspace.LeadName)
	last := m.lead.last()
	streaming := last != nil && last.streaming
	switch {
	case e.IsError && e.Detail == "(interrupted)":
		settle(m.lead)
		m.lead.add(&entry{kind: entryNote, text: "(the lead's turn was interrupted)"})
	case streaming:
		if e.Detail != "" {
			last.text = e.Detail
		}
		settle(m.lead)
	case e.Detail != "":
		m.lead.add(&entry{kind: entryReply, who: workspace.LeadName, text: e.Detail})
	}
	m.lastErr = ""
}

func (m *Model) findMember(name string) int {
	for i, mb := range m.team.members {
		if mb.Name == name {
			return i
		}
	}
	return -1
}
