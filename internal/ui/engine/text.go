package engine

import (
	"strings"

	"github.com/agentteam/agentteam/internal/ui/mdrender"
)

// FirstLine is the first non-empty line of s, cut to n runes, control
// characters shown as '?'.
func FirstLine(s string, n int) string {
	s = strings.TrimSpace(mdrender.Sanitize(s))
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = strings.TrimSpace(s[:i]), true
	}
	if r := []rune(s); len(r) > n {
		s, more = string(r[:n]), true
	}
	if more {
		s += " …"
	}
	return s
}
