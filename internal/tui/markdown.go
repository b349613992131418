package tui

import (
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// markdown renders model replies with glamour, one renderer per width.
// Without colour it uses glamour's plain "notty" style.
type markdown struct {
	light bool // the terminal has a light background (asked once, before the program starts)
	width int
	r     *glamour.TermRenderer
}

// render returns the lines of text rendered at width w, without the blank
// lines glamour puts around a document; plain wrapping if glamour fails.
func (md *markdown) render(text string, w int) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if md.r == nil || md.width != w {
		md.width = w
		md.r = newGlamour(w, md.light)
	}
	if md.r != nil {
		if out, err := md.r.Render(text); err == nil {
			return trimBlank(strings.Split(strings.TrimRight(out, "\n"), "\n"))
		}
	}
	return wrapPlain(text, w)
}

func newGlamour(w int, light bool) *glamour.TermRenderer {
	profile := lipgloss.ColorProfile()
	style := "dark"
	if profile == termenv.Ascii {
		style = "notty"
	} else if light {
		style = "light"
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(w),
		glamour.WithColorProfile(profile))
	if err != nil {
		return nil
	}
	return r
}

// trimBlank drops blank lines at both ends.
func trimBlank(lines []string) []string {
	blank := func(s string) bool { return strings.TrimSpace(ansi.Strip(s)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// stableSplit cuts streaming markdown where the part before can no longer
// change its rendering: at the last blank line outside a code fence.
func stableSplit(text string) int {
	i := strings.LastIndex(text, "\n\n")
	for i > 0 {
		if strings.Count(text[:i], "```")%2 == 0 {
			return i
		}
		i = strings.LastIndex(text[:i], "\n\n")
	}
	return 0
}
