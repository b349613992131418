package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/agentteam/agentteam/team"
)

// styles of the whole screen, built once.
type styles struct {
	header, dim, user, who, tool, ok, bad, note, errText, focus, status, help, key, plan style
	// thinking is a reply's reasoning: dimmed and italic, apart from the reply.
	thinking    style
	statusColor map[team.Status]style
}

// style is a Lip Gloss style of text attributes and a colour, no layout,
// with the sequences that open and close it: a frame renders a few
// thousand spans, and Lip Gloss v2 works out each one's sequences again
// (v1 skipped them all under the tests' colourless profile). A span of one
// line is wrapped in them; anything else goes to Lip Gloss.
type style struct {
	ls          lipgloss.Style
	open, close string
}

func newStyle(ls lipgloss.Style) style {
	const mark = "x" // no SGR sequence holds an x
	out := ls.Render(mark)
	i := strings.Index(out, mark)
	return style{ls: ls, open: out[:i], close: out[i+len(mark):]}
}

// Render is ls.Render(strs...), the same bytes.
func (s style) Render(strs ...string) string {
	if len(strs) == 1 && !strings.ContainsAny(strs[0], "\n\r\t") {
		return s.open + strs[0] + s.close
	}
	return s.ls.Render(strs...)
}

func fg(c string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(c)) }

func newStyles() styles {
	s := styles{
		header:  newStyle(fg("12").Bold(true)),
		dim:     newStyle(fg("8")),
		user:    newStyle(fg("13").Bold(true)),
		who:     newStyle(fg("14").Bold(true)),
		tool:    newStyle(fg("11")),
		ok:      newStyle(fg("10")),
		bad:     newStyle(fg("9")),
		note:    newStyle(fg("7").Italic(true)),
		errText: newStyle(fg("9").Bold(true)),
		focus:   newStyle(lipgloss.NewStyle().Reverse(true)),
		status:  newStyle(fg("7")),
		help:    newStyle(fg("8")),
		key:     newStyle(fg("7").Bold(true)),
		plan:    newStyle(fg("11").Bold(true)),
	}
	s.thinking = newStyle(fg("8").Faint(true).Italic(true))
	s.statusColor = map[team.Status]style{
		team.StatusQueued:   newStyle(fg("11")),
		team.StatusWorking:  newStyle(fg("10").Bold(true)),
		team.StatusIdle:     newStyle(fg("12")),
		team.StatusShutdown: newStyle(fg("8")),
		team.StatusFailed:   newStyle(fg("9").Bold(true)),
	}
	return s
}

// statusSymbols tell statuses apart without colour (NO_COLOR).
var statusSymbols = map[team.Status]string{
	team.StatusQueued:   "◔",
	team.StatusWorking:  "▶",
	team.StatusIdle:     "○",
	team.StatusShutdown: "■",
	team.StatusFailed:   "✗",
}

func statusSymbol(status team.Status) string {
	if s, ok := statusSymbols[status]; ok {
		return s
	}
	return "?"
}

func (s styles) statusStyle(status team.Status) style {
	if st, ok := s.statusColor[status]; ok {
		return st
	}
	return s.dim
}

func itoa(n int) string { return strconv.Itoa(n) }

func trimZero(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}
