package tui

import (
	"regexp"
	"strings"

	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

// requestIDRe finds the request id in a plan request's text: "(request plan-1a2b3c4d)".
var requestIDRe = regexp.MustCompile(`\(request ([^)\s]+)\)`)

// planRequest shows a plan waiting for approval so that it stands out, with
// the commands that answer it; it stays open until the answer goes out.
func (m *Model) planRequest(e team.Event) {
	id := ""
	if sm := requestIDRe.FindStringSubmatch(e.Detail); sm != nil {
		id = sm[1]
	}
	en := &entry{kind: entryPlan, who: e.From, typ: id, text: planText(e.Detail)}
	m.lead.add(en)
	m.plans[e.From] = en
	m.hint = planHint(e.From)
}

func planHint(name string) string {
	return name + "'s plan awaits your approval: /approve " + name + "  or  /reject " + name + " feedback"
}

// planAnswered marks a teammate's open plan request with the answer it got
// (from the lead's review_plan, the person's /approve, or the timeout).
func (m *Model) planAnswered(e team.Event) {
	en, ok := m.plans[e.To]
	if !ok {
		return
	}
	delete(m.plans, e.To)
	if m.hint == planHint(e.To) {
		m.hint = ""
	}
	switch {
	case e.From == workspace.LeadName && strings.HasPrefix(e.Detail, "No review"):
		en.answer = "⌛ not reviewed in time"
	case strings.Contains(e.Detail, "approved your plan"):
		en.answer = "✓ approved"
	default:
		en.answer = "✗ rejected"
	}
	if e.From == workspace.UserName {
		en.answer += " by you"
	} else {
		en.answer += " by the " + e.From
	}
	en.invalidate()
}

// planText is the plan itself from a request's text, without the framing
// that tells the lead how to answer; the whole text if it is not framed so.
func planText(content string) string {
	_, body, ok := strings.Cut(content, "\n\n")
	if !ok {
		return content
	}
	if i := strings.LastIndex(body, "\n\nAnswer with review_plan"); i >= 0 {
		body = body[:i]
	}
	if strings.TrimSpace(body) == "" {
		return content
	}
	return body
}

// planLines renders a plan request: a marked head, the plan, and the
// commands that answer it (or the answer it got).
func (r *renderer) planLines(e *entry, w int) []string {
	st := r.st
	head := st.plan.Render("⏸ " + e.who + " asks to approve a plan")
	if e.typ != "" {
		head += st.dim.Render(" · " + e.typ)
	}
	out := append([]string{"", clipLine(head, w)}, r.md.render(e.text, w)...)
	if e.answer != "" {
		return append(out, clipLine("  "+st.plan.Render(e.answer), w))
	}
	cmds := st.key.Render("/approve "+e.who+" [feedback]") + st.dim.Render("  ·  ") + st.key.Render("/reject "+e.who+" feedback")
	return append(out, clipLine("  "+cmds, w))
}
