package tui

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

// pendingAsk is a tool call that waits for the person's permission.
type pendingAsk struct {
	id, who, tool, subject, why, diff string
}

// maxAskDiffLines is how much of a write's diff the ask box shows; ctrl+o
// shows it whole.
const maxAskDiffLines = 8

// permissionEvent queues an ask for the person and drops it once decided;
// an allowed write's diff waits for its tool call's entry.
func (m *Model) permissionEvent(e team.Event, p team.Permission) {
	if p.Decision == "allowed" && p.Diff != "" && isWrite(p.Tool) {
		m.writes.allowed(e.Agent, p.Subject, p.Diff)
	}
	if p.RequestID == "" {
		return
	}
	if p.Decision == "asked" {
		if p.By == workspace.UserName {
			m.asks = append(m.asks, pendingAsk{id: p.RequestID, who: e.Agent, tool: p.Tool, subject: p.Subject, why: p.Why, diff: p.Diff})
		}
		return
	}
	for i, a := range m.asks {
		if a.id == p.RequestID {
			m.asks = append(m.asks[:i], m.asks[i+1:]...)
			break
		}
	}
}

// askKey answers the first ask with a key, when the input is empty: y
// allows once, A allows always, n starts a denial whose reason is typed.
func (m *Model) askKey(k tea.KeyPressMsg) bool {
	if !m.in.empty() {
		return false
	}
	if len(m.asks) == 0 {
		return m.budgetKey(k)
	}
	a := m.asks[0]
	switch k.String() {
	case "y":
		m.answerAsk(a.id, true, false, "")
	case "A":
		m.answerAsk(a.id, true, true, "")
	case "n":
		m.in.set("/deny " + a.id + " ")
		m.hint = "type why " + a.who + " may not, then enter"
	default:
		return false
	}
	return true
}

func (m *Model) answerAsk(id string, approve, always bool, reason string) {
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
func (m *Model) budgetKey(k tea.KeyPressMsg) bool {
	if m.budgetAsk == "" {
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
	m.budgetAsk = ""
	m.do(func() tea.Msg {
		text, err := m.eng.AnswerBudget(goOn)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return noteMsg{text: text}
	})
	return true
}

// askLines is the box of the first waiting ask: who, the tool, the exact
// command or the diff, the keys; and how many more wait. A reached budget
// is asked about once no permission waits.
func (m *Model) askLines(w int) []string {
	if len(m.asks) == 0 && m.budgetAsk != "" {
		st := m.st
		text := m.budgetAsk
		keys := st.key.Render("y") + st.dim.Render(" go on (as much again)  ") + st.key.Render("n") + st.dim.Render(" stop the team")
		var out []string
		for _, l := range wrapPlain("⏸ "+text, w) {
			out = append(out, st.plan.Render(l))
		}
		return append(out, clipLine("  "+keys, w))
	}
	if len(m.asks) == 0 {
		return nil
	}
	st, a := m.st, m.asks[0]
	head := st.plan.Render("⏸ "+a.who+" asks to run "+a.tool) + " " + printable(a.subject)
	if more := len(m.asks) - 1; more > 0 {
		head += st.dim.Render(fmt.Sprintf("  (%d more waiting)", more))
	}
	out := []string{clipLine(head, w), clipLine(st.dim.Render("  "+printable(a.why)+" · "+a.id), w)}
	if a.diff != "" {
		lines := strings.Split(strings.TrimRight(a.diff, "\n"), "\n")
		if !m.r.expand && len(lines) > maxAskDiffLines {
			lines = append(lines[:maxAskDiffLines], fmt.Sprintf("… %d more lines (ctrl+o shows all)", len(lines)-maxAskDiffLines))
		}
		for _, l := range lines {
			out = append(out, clipLine("  "+diffStyle(st, l).Render(printable(l)), w))
		}
	}
	keys := st.key.Render("y") + st.dim.Render(" allow once  ") + st.key.Render("A") + st.dim.Render(" allow always  ") +
		st.key.Render("n") + st.dim.Render(" deny")
	return append(out, clipLine("  "+keys, w))
}

func diffStyle(st styles, line string) interface{ Render(...string) string } {
	switch {
	case strings.HasPrefix(line, "+"):
		return st.ok
	case strings.HasPrefix(line, "-"):
		return st.bad
	}
	return st.dim
}

// printable shows a model's control characters as '?': they could move
// the cursor and hide what is really asked.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsControl(r) && r != 0x7f {
			return r
		}
		return '?'
	}, s)
}
