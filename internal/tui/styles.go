package tui

import (
	"strconv"

	"charm.land/lipgloss/v2"

	"github.com/agentteam/agentteam/team"
)

// styles of the whole screen, built once.
type styles struct {
	header, dim, user, who, tool, ok, bad, note, errText, focus, status, help, key, plan lipgloss.Style
	// thinking is a reply's reasoning: dimmed and italic, apart from the reply.
	thinking    lipgloss.Style
	statusColor map[team.Status]lipgloss.Style
}

func newStyles() styles {
	s := styles{
		header:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		dim:     lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		user:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("13")),
		who:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("14")),
		tool:    lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		ok:      lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		bad:     lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		note:    lipgloss.NewStyle().Foreground(lipgloss.Color("7")).Italic(true),
		errText: lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		focus:   lipgloss.NewStyle().Reverse(true),
		status:  lipgloss.NewStyle().Foreground(lipgloss.Color("7")),
		help:    lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		key:     lipgloss.NewStyle().Foreground(lipgloss.Color("7")).Bold(true),
		plan:    lipgloss.NewStyle().Foreground(lipgloss.Color("11")).Bold(true),
	}
	s.thinking = lipgloss.NewStyle().Foreground(lipgloss.Color("8")).Faint(true).Italic(true)
	s.statusColor = map[team.Status]lipgloss.Style{
		team.StatusQueued:   lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		team.StatusWorking:  lipgloss.NewStyle().Foreground(lipgloss.Color("10")).Bold(true),
		team.StatusIdle:     lipgloss.NewStyle().Foreground(lipgloss.Color("12")),
		team.StatusShutdown: lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		team.StatusFailed:   lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
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

func (s styles) statusStyle(status team.Status) lipgloss.Style {
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
