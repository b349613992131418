package draw

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/agentteam/agentteam/team/registry"
)

// Styles of the whole screen, built once.
type Styles struct {
	Header, Dim, User, Who, Tool, OK, Bad, Note, ErrText, Focus, Status, Help, Key, Plan Style
	// Thinking is a reply's reasoning: dimmed and italic, apart from the reply.
	Thinking    Style
	statusColor map[registry.Status]Style
}

// Style is a Lip Gloss style of text attributes and a colour, no layout,
// with the sequences that open and close it: a frame renders a few
// thousand spans, and Lip Gloss v2 works out each one's sequences again
// (v1 skipped them all under the tests' colourless profile). A span of one
// line is wrapped in them; anything else goes to Lip Gloss.
type Style struct {
	ls          lipgloss.Style
	open, close string
}

func newStyle(ls lipgloss.Style) Style {
	const mark = "x" // no SGR sequence holds an x
	out := ls.Render(mark)
	i := strings.Index(out, mark)
	return Style{ls: ls, open: out[:i], close: out[i+len(mark):]}
}

// Render is ls.Render(strs...), the same bytes.
func (s Style) Render(strs ...string) string {
	if len(strs) == 1 && !strings.ContainsAny(strs[0], "\n\r\t") {
		return s.open + strs[0] + s.close
	}
	return s.ls.Render(strs...)
}

func fg(c string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(c)) }

// NewStyles are the screen's styles.
func NewStyles() Styles {
	s := Styles{
		Header:  newStyle(fg("12").Bold(true)),
		Dim:     newStyle(fg("8")),
		User:    newStyle(fg("13").Bold(true)),
		Who:     newStyle(fg("14").Bold(true)),
		Tool:    newStyle(fg("11")),
		OK:      newStyle(fg("10")),
		Bad:     newStyle(fg("9")),
		Note:    newStyle(fg("7").Italic(true)),
		ErrText: newStyle(fg("9").Bold(true)),
		Focus:   newStyle(lipgloss.NewStyle().Reverse(true)),
		Status:  newStyle(fg("7")),
		Help:    newStyle(fg("8")),
		Key:     newStyle(fg("7").Bold(true)),
		Plan:    newStyle(fg("11").Bold(true)),
	}
	s.Thinking = newStyle(fg("8").Faint(true).Italic(true))
	s.statusColor = map[registry.Status]Style{
		registry.StatusQueued:   newStyle(fg("11")),
		registry.StatusWorking:  newStyle(fg("10").Bold(true)),
		registry.StatusIdle:     newStyle(fg("12")),
		registry.StatusShutdown: newStyle(fg("8")),
		registry.StatusFailed:   newStyle(fg("9").Bold(true)),
	}
	return s
}

// statusSymbols tell statuses apart without colour (NO_COLOR).
var statusSymbols = map[registry.Status]string{
	registry.StatusQueued:   "◔",
	registry.StatusWorking:  "▶",
	registry.StatusIdle:     "○",
	registry.StatusShutdown: "■",
	registry.StatusFailed:   "✗",
}

// StatusSymbol is a status's symbol, "?" for one not known.
func StatusSymbol(status registry.Status) string {
	if s, ok := statusSymbols[status]; ok {
		return s
	}
	return "?"
}

// StatusStyle is a status's colour, dim for one not known.
func (s Styles) StatusStyle(status registry.Status) Style {
	if st, ok := s.statusColor[status]; ok {
		return st
	}
	return s.Dim
}

// trimZero writes f with one decimal, none when it is .0.
func trimZero(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}
