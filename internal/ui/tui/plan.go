package tui

import (
	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/team/event"
)

// planBoard is the plan requests shown and not yet answered.
type planBoard struct {
	m    *Model
	open map[string]*entry // by teammate
}

// request shows a plan waiting for approval so that it stands out, with
// the commands that answer it; it stays open until the answer goes out.
func (b *planBoard) request(r event.RequestOpened) {
	m := b.m
	en := &entry{kind: entryPlan, who: r.From, typ: r.ID, text: r.Text}
	m.lead.add(en)
	b.open[r.From] = en
	m.hint = planHint(r.From)
	m.bell()
}

func planHint(name string) string {
	return name + "'s plan awaits your approval: /approve " + name + "  or  /reject " + name + " feedback"
}

// answered marks a teammate's open plan request with how it ended and
// who ended it (the lead's review_plan, the person's /approve, or, for a
// plan nobody reviewed in time, the lead it waited for).
func (b *planBoard) answered(r event.RequestRef, outcome event.Outcome, by string) {
	en, ok := b.open[r.From]
	if !ok || en.typ != r.ID {
		return
	}
	delete(b.open, r.From)
	if b.m.hint == planHint(r.From) {
		b.m.hint = ""
	}
	switch outcome {
	case event.OutcomeApproved:
		en.answer = "✓ approved"
	case event.OutcomeExpired:
		en.answer = "⌛ not reviewed in time"
	case event.OutcomeFailed:
		en.answer = "✗ not delivered"
	default:
		en.answer = "✗ rejected"
	}
	switch by {
	case inbox.UserName:
		en.answer += " by you"
	case event.ByRuntime:
		en.answer += " by the runtime"
	default:
		en.answer += " by the " + by
	}
	en.invalidate()
}

// planLines renders a plan request: a marked head, the plan, and the
// commands that answer it (or the answer it got).
func (r *renderer) planLines(e *entry, w int) []string {
	st := r.st
	head := st.Plan.Render("⏸ " + e.who + " asks to approve a plan")
	if e.typ != "" {
		head += st.Dim.Render(" · " + e.typ)
	}
	out := append([]string{"", draw.Clip(head, w)}, r.md.Render(e.text, w)...)
	if e.answer != "" {
		return append(out, draw.Clip("  "+st.Plan.Render(e.answer), w))
	}
	cmds := st.Key.Render("/approve "+e.who+" [feedback]") + st.Dim.Render("  ·  ") + st.Key.Render("/reject "+e.who+" feedback")
	return append(out, draw.Clip("  "+cmds, w))
}
