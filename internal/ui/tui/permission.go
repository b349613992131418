package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/team/event"
)

// pendingAsk is a tool call that waits for the person's permission.
type pendingAsk struct {
	id, who, tool, subject, why, diff string
	// prefix is the wider rule the person may allow for the session
	// (go test *), "" when there is none.
	prefix string
}

// asker is what waits for the person's answer: the tool calls that ask
// for permission, oldest first, and a reached budget.
type asker struct {
	m    *Model
	asks []pendingAsk
	// budget, when not "", is the reached budget the person is asked about.
	budget string
}

// maxAskDiffLines is how much of a write's diff the ask box shows; ctrl+o
// shows it whole.
const maxAskDiffLines = 8

// event queues an ask for the person and drops it once decided;
// an allowed write's diff waits for its tool call's entry.
func (q *asker) event(e event.Event, p event.Permission) {
	m := q.m
	if p.Decision == "allowed" && p.Diff != "" && isWrite(p.Tool) {
		m.writes.allowed(e.Agent, p.Subject, p.Diff)
	}
	if p.RequestID == "" {
		return
	}
	if p.Decision == "asked" {
		if p.By == inbox.UserName {
			q.asks = append(q.asks, pendingAsk{id: p.RequestID, who: e.Agent, tool: p.Tool, subject: p.Subject, why: p.Why, diff: p.Diff, prefix: p.Prefix})
			m.bell()
		}
		return
	}
	for i, a := range q.asks {
		if a.id == p.RequestID {
			q.asks = append(q.asks[:i], q.asks[i+1:]...)
			break
		}
	}
}

// askChoice is one answer to an ask, as the ask box numbers it.
type askChoice struct {
	key, label string
	answer     func(m *Model, a pendingAsk)
}

// askChoices are the answers to a, numbered from 1 in this order: allow
// once, allow its prefix rule for the session (when it has one), allow
// always, deny.
func askChoices(a pendingAsk) []askChoice {
	cs := []askChoice{{key: "y", label: "allow once", answer: func(m *Model, a pendingAsk) { m.ask.answer(a.id, true, false, "") }}}
	if a.prefix != "" {
		cs = append(cs, askChoice{key: "s", label: "allow " + draw.Printable(a.prefix) + " this session", answer: func(m *Model, a pendingAsk) { m.ask.allowSession(a.id) }})
	}
	return append(cs,
		askChoice{key: "A", label: "allow always", answer: func(m *Model, a pendingAsk) { m.ask.answer(a.id, true, true, "") }},
		askChoice{key: "n", label: "deny", answer: func(m *Model, a pendingAsk) {
			m.in.set("/deny " + a.id + " ")
			m.hint = "type why " + a.who + " may not, then enter"
		}})
}

// failure takes a failure: a reached budget asks the person whether to
// go on, and the team's stop for its budget ends that ask.
func (q *asker) failure(p event.Failure) {
	switch p.Class {
	case event.ClassBudgetAsk:
		q.budget = p.Text
	case event.ClassBudget:
		q.budget = ""
	}
}

// key answers the first ask with a key, when the input is empty: a
// choice's number or letter (y allows once, s the prefix for the session,
// A always, n starts a denial whose reason is typed).
func (q *asker) key(k tea.KeyPressMsg) bool {
	m := q.m
	if !m.in.empty() {
		return false
	}
	if len(q.asks) == 0 {
		return q.budgetKey(k)
	}
	a := q.asks[0]
	key := k.String()
	for i, c := range askChoices(a) {
		if key == c.key || key == strconv.Itoa(i+1) {
			c.answer(m, a)
			return true
		}
	}
	return false
}

// allowSession allows ask id and its prefix rule while the team runs.
func (q *asker) allowSession(id string) {
	m := q.m
	m.hint = "answering " + id + "…"
	m.do(func() tea.Msg {
		text, err := m.eng.AllowForSession(m.ctx, id)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return hintMsg(text)
	})
}

// bell rings the terminal's bell for something that waits for the person
// (an ask, a plan), unless the terminal said it has the person's focus.
func (m *Model) bell() {
	if !m.focused {
		m.cmds = append(m.cmds, tea.Raw("\a"))
	}
}

func (q *asker) answer(id string, approve, always bool, reason string) {
	m := q.m
	m.hint = "answering " + id + "…"
	m.do(func() tea.Msg {
		text, err := m.eng.AnswerPermission(m.ctx, id, approve, always, reason)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return hintMsg(text)
	})
}

// budgetKey answers the reached budget: y goes on, n stops the team.
func (q *asker) budgetKey(k tea.KeyPressMsg) bool {
	m := q.m
	if q.budget == "" {
		return false
	}
	var goOn bool
	switch k.String() {
	case "y":
		goOn = true
	case "n":
	default:
		return false
	}
	q.budget = ""
	m.do(func() tea.Msg {
		text, err := m.eng.AnswerBudget(goOn)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return noteMsg{text: text}
	})
	return true
}

// lines is the box of the first waiting ask: who, the tool, the exact
// command or the diff, the keys; and how many more wait. A reached budget
// is asked about once no permission waits.
func (q *asker) lines(w int) []string {
	m := q.m
	if len(q.asks) == 0 && q.budget != "" {
		st := m.st
		text := q.budget
		keys := st.Key.Render("y") + st.Dim.Render(" go on (as much again)  ") + st.Key.Render("n") + st.Dim.Render(" stop the team")
		var out []string
		for _, l := range draw.Wrap("⏸ "+text, w) {
			out = append(out, st.Plan.Render(l))
		}
		return append(out, draw.Clip("  "+keys, w))
	}
	if len(q.asks) == 0 {
		return nil
	}
	st, a := m.st, q.asks[0]
	head := st.Plan.Render("⏸ "+a.who+" asks to run "+a.tool) + " " + draw.Printable(a.subject)
	if more := len(q.asks) - 1; more > 0 {
		head += st.Dim.Render(fmt.Sprintf("  (%d more waiting)", more))
	}
	out := []string{draw.Clip(head, w), draw.Clip(st.Dim.Render("  "+draw.Printable(a.why)+" · "+a.id), w)}
	if a.diff != "" {
		lines := strings.Split(strings.TrimRight(a.diff, "\n"), "\n")
		if !m.r.expand && len(lines) > maxAskDiffLines {
			lines = append(lines[:maxAskDiffLines], fmt.Sprintf("… %d more lines (ctrl+o shows all)", len(lines)-maxAskDiffLines))
		}
		for _, l := range lines {
			out = append(out, draw.Clip("  "+draw.DiffStyle(st, l).Render(draw.Printable(l)), w))
		}
	}
	// The numbered choices, on as many lines as the width needs.
	line, width := "  ", 2
	for i, c := range askChoices(a) {
		n := strconv.Itoa(i + 1)
		cw := len(n) + 1 + len(c.key) + 1 + draw.Width(c.label)
		if width > 2 && width+2+cw > w {
			out = append(out, draw.Clip(line, w))
			line, width = "  ", 2
		}
		if width > 2 {
			line, width = line+"  ", width+2
		}
		line += st.Dim.Render(n+" ") + st.Key.Render(c.key) + st.Dim.Render(" "+c.label)
		width += cw
	}
	return append(out, draw.Clip(line, w))
}
