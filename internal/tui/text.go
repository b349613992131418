package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// fit makes lines exactly h lines of at most w cells each: long lines are
// cut, missing lines are blank, extra lines dropped from the end.
func fit(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := 0; i < h && i < len(lines); i++ {
		out[i] = clipLine(lines[i], w)
	}
	return out
}

// clipLine cuts a styled line to w cells.
func clipLine(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// padLine pads a styled line with spaces to exactly w cells (cutting it if longer).
func padLine(s string, w int) string {
	s = clipLine(s, w)
	if n := w - lipgloss.Width(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// wrapPlain wraps plain text to w cells, keeping the text's own line breaks.
func wrapPlain(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	var out []string
	for _, para := range strings.Split(s, "\n") {
		wrapped := ansi.Wrap(para, w, " ")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// firstLine is the first non-empty line of s, cut to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
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

// joinColumns puts two blocks of equal height side by side, the left padded to lw.
func joinColumns(left, right []string, lw int, sep string) []string {
	out := make([]string, len(left))
	for i := range left {
		r := ""
		if i < len(right) {
			r = right[i]
		}
		out[i] = padLine(left[i], lw) + sep + r
	}
	return out
}

// humanTokens writes a token count compactly: 950, 1.2k, 3.4M.
func humanTokens(n int) string {
	switch {
	case n < 1000:
		return itoa(n)
	case n < 1_000_000:
		return trimZero(float64(n)/1000) + "k"
	default:
		return trimZero(float64(n)/1_000_000) + "M"
	}
}
