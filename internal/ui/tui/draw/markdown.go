package draw

import (
	"strings"

	"github.com/agentteam/agentteam/internal/ui/mdrender"
)

// Markdown renders model replies with internal/ui/mdrender: two columns in,
// two of margin at the right. Without colour (NO_COLOR, a dumb terminal)
// it writes no escape sequence and keeps emphasis markers as written.
type Markdown struct {
	Light  bool // the terminal has a light background (settled once, before the program starts)
	Colour bool // the terminal shows colours; false: no escape sequence at all
}

// Render returns the lines of text rendered at width w.
func (md *Markdown) Render(text string, w int) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := mdrender.Render(text, max(w-4, 10), md.theme())
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return lines
}

func (md *Markdown) theme() *mdrender.Theme {
	switch {
	case !md.Colour:
		return &mdrender.Plain
	case md.Light:
		return &mdrender.Light
	}
	return &mdrender.Dark
}

// StableSplit cuts streaming markdown where the part before can no longer
// change its rendering: at the last blank line outside a code fence.
func StableSplit(text string) int {
	i := strings.LastIndex(text, "\n\n")
	for i > 0 {
		if strings.Count(text[:i], "```")%2 == 0 {
			return i
		}
		i = strings.LastIndex(text[:i], "\n\n")
	}
	return 0
}
