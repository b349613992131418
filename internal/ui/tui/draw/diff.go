package draw

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// MaxDiffLineBytes bounds each line of a diff shown (a minified file is one long line).
const MaxDiffLineBytes = 1000

// DiffStyle is the style of a diff's line: added, removed or the rest.
func DiffStyle(st Styles, line string) interface{ Render(...string) string } {
	switch {
	case strings.HasPrefix(line, "+"):
		return st.OK
	case strings.HasPrefix(line, "-"):
		return st.Bad
	}
	return st.Dim
}

// CutLine cuts a line longer than MaxDiffLineBytes, at a rune's start.
func CutLine(l string) string {
	if len(l) <= MaxDiffLineBytes {
		return l
	}
	n := MaxDiffLineBytes
	for n > 0 && !utf8.RuneStart(l[n]) {
		n--
	}
	return l[:n] + fmt.Sprintf(" … (%d more bytes)", len(l)-n)
}

// plain renders text as it is.
type plain struct{}

func (plain) Render(s ...string) string { return strings.Join(s, " ") }

// Diff renders a unified diff (or git's diffstat and patch) at width
// w: added lines in the ok colour, removed ones in the bad colour, headers
// dimmed; long lines wrap. The text comes from files a model wrote, so its
// control characters are shown as '?', and a very long line is cut.
func Diff(st Styles, text string, w int) []string {
	raw := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []string
	inHunk := false
	for _, l := range raw {
		var style Renderer = plain{}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inHunk = false
			style = st.Tool
		case strings.HasPrefix(l, "@@"):
			inHunk = true
			style = st.Dim
		case !inHunk && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "index ") ||
			strings.HasPrefix(l, "new file") || strings.HasPrefix(l, "deleted file")):
			style = st.Dim
		case inHunk && strings.HasPrefix(l, "+"):
			style = st.OK
		case inHunk && strings.HasPrefix(l, "-"):
			style = st.Bad
		case inHunk && strings.HasPrefix(l, "\\"):
			style = st.Dim
		}
		l = strings.ReplaceAll(Printable(CutLine(l)), "\t", "    ")
		for _, part := range strings.Split(ansi.Hardwrap(l, w, true), "\n") {
			out = append(out, style.Render(part))
		}
	}
	return out
}
