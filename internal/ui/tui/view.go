package tui

import (
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/mdrender"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"

	"github.com/agentteam/agentteam/team/models"
)

// layout is where each pane goes for the current size.
type layout struct {
	wide                bool
	convW, convH        int
	sideW, teamH, feedH int
	bodyH               int
}

// screen is the frame: the terminal's size, where each pane goes, and
// the lines of the conversation's title, the status line and the help bar.
type screen struct {
	m    *Model
	w, h int
	help bool // ? shows every key in place of the conversation
}

// wideMin is the width from which the team and messages sit beside the conversation.
const wideMin = 100

func (s *screen) layout() layout {
	m := s.m
	l := layout{bodyH: max(s.h-2-inputHeight, 1)}
	n := len(m.team.Members)
	if s.w >= wideMin && !s.help { // the key list takes the whole width
		l.wide = true
		l.sideW = min(max(s.w*36/100, 34), 60)
		l.convW = s.w - l.sideW - 1
		l.convH = l.bodyH - 1
		l.teamH = min(n+3, max(l.bodyH*55/100, 3))
		if n == 0 {
			l.teamH = 3
		}
		l.feedH = l.bodyH - l.teamH
		return l
	}
	l.convW = s.w
	l.teamH = min(max(n+2, 3), 6)
	l.feedH = 3
	if l.bodyH < 14 {
		l.teamH, l.feedH = min(l.teamH, 3), 2
	}
	if l.bodyH < 8 || s.help { // the key list needs the room more than the team does
		l.teamH, l.feedH = 0, 0
	}
	l.convH = max(l.bodyH-1-l.teamH-l.feedH, 1)
	return l
}

func (s *screen) convWidth() int {
	return max(s.layout().convW, 10)
}
func (s *screen) convHeight() int {
	return s.layout().convH
}

// key takes the keys that change what the screen shows: tool results,
// reasoning and diffs expanded or folded, scrolling, and ? (the last
// three with the input empty); false for any other key.
func (s *screen) key(k tea.KeyPressMsg) bool {
	m := s.m
	switch k.String() {
	case "ctrl+o":
		m.r.expand = !m.r.expand
	case "ctrl+t":
		m.hint = m.r.toggleThinking()
	case "ctrl+g":
		m.hint = m.r.toggleDiffs()
	case "pgup":
		m.scroll(-max(s.convHeight()-2, 1))
	case "pgdown":
		m.scroll(max(s.convHeight()-2, 1))
	case "home", "end", "?":
		if !m.in.empty() {
			return false
		}
		switch k.String() {
		case "home":
			m.pane().toStart(m.r, s.convWidth(), s.convHeight())
		case "end":
			m.pane().toEnd()
		default:
			s.help = !s.help
		}
	default:
		return false
	}
	return true
}

// View is the frame: the screen, on the alternate screen, with the mouse
// captured only after /mouse on (released, the terminal selects text).
func (m *Model) View() tea.View {
	v := tea.NewView(m.scr.render())
	v.AltScreen = true
	v.ReportFocus = true // no bell for an ask the person is looking at
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// render draws the whole screen: exactly h lines of at most w cells.
func (s *screen) render() string {
	m := s.m
	if s.w <= 0 || s.h <= 0 {
		return ""
	}
	if m.quitting {
		return ""
	}
	l := s.layout()
	m.team.LeadBusy = m.leadBusy
	asks := m.ask.lines(l.convW)
	if len(asks) > l.convH-1 {
		asks = asks[len(asks)-max(l.convH-1, 1):] // the keys line stays
	}
	conv := append([]string{s.convTitle(l.convW)}, s.convBody(l.convW, max(l.convH-len(asks), 1))...)
	conv = append(conv, asks...)
	var body []string
	if l.wide {
		side := append(m.team.Render(m.st, l.sideW, l.teamH), m.feed.Render(m.st, l.sideW, l.feedH)...)
		body = draw.Columns(conv, side, l.convW, m.st.Dim.Render("│"))
	} else {
		body = append(conv, m.team.Render(m.st, s.w, l.teamH)...)
		body = append(body, m.feed.Render(m.st, s.w, l.feedH)...)
	}
	lines := make([]string, 0, s.h)
	lines = append(lines, m.pop.overlay(body)...)
	lines = append(lines, strings.Split(m.in.ta.View(), "\n")...)
	lines = append(lines, s.helpBar(s.w), s.statusLine())
	return strings.Join(draw.Fit(lines, s.w, s.h), "\n")
}

// convTitle says whose conversation is shown and where typing goes.
func (s *screen) convTitle(w int) string {
	m := s.m
	if m.mate != nil {
		return draw.Clip(m.st.Header.Render(m.mate.name)+m.st.Dim.Render(m.prog.MateWork(m.mate.name, m.team.Activity[m.mate.name])+" · read-only · typing goes to "+m.mate.name+"'s inbox"), w)
	}
	state := m.prog.LeadStatus(m.leadBusy, m.team.Activity[inbox.LeadName])
	auto := "auto on"
	switch {
	case m.opts.Watch != "":
		auto = "watching: typing goes to the lead's inbox"
	case !m.auto:
		auto = "auto off"
	}
	return draw.Clip(m.st.Header.Render("lead")+m.st.Dim.Render(" · "+state+" · "+auto), w)
}

func (s *screen) convBody(w, h int) []string {
	m := s.m
	if s.help {
		return draw.Fit(draw.Indent(draw.Wrap(keysText(), max(w-1, 1)), " "), w, h) // wrapped, never cut
	}
	return m.pane().Render(m.r, w, h)
}

// statusLine is model, workspace, tokens, the focused agent's AGENTS.md
// files, the sandbox and the last error in words.
func (s *screen) statusLine() string {
	m := s.m
	parts := []string{m.opts.ModelName, m.opts.Workspace, draw.Tokens(m.tokens) + " tokens"}
	if m.cost != nil {
		parts = append(parts, "cost "+models.FormatCost(m.cost))
	}
	if c := m.prog.ContextFull(s.focusName(), s.focusModel()); c != "" {
		parts = append(parts, s.focusName()+" "+c)
	}
	parts = append(parts, m.instructions[s.focusName()], m.mcp.status(), m.opts.Sandbox)
	line := m.st.Status.Render(strings.Join(nonEmpty(parts), " · "))
	if m.lastErr != "" {
		line += m.st.Status.Render(" · ") + m.st.ErrText.Render(mdrender.Sanitize(m.lastErr))
	}
	return line
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shortPath writes the home directory as ~.
func shortPath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// focusName is the agent whose conversation is shown.
func (s *screen) focusName() string {
	m := s.m
	if m.focus == "" {
		return inbox.LeadName
	}
	return m.focus
}

// focusModel is the model label of the agent whose conversation is shown.
func (s *screen) focusModel() string {
	m := s.m
	if m.focus == "" {
		return m.opts.ModelName
	}
	if i := m.team.Find(m.focus); i >= 0 {
		return m.team.Members[i].Model
	}
	return ""
}
