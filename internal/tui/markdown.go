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
		if out, err := md.r.Render(escapeHTML(text)); err == nil {
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

// escapeHTML backslash-escapes each "<" that would open raw HTML (a letter,
// "/", "!" or "?" follows), outside code spans and code blocks: glamour strips
// HTML, so "Vec<String>" or "<your key>" would vanish. Text shows as written.
func escapeHTML(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	lines := strings.SplitAfter(text, "\n")
	fence := ""                      // the open code fence's marker, "" outside one
	prevBlank, inCode := true, false // an indented line after a blank one is code
	inList := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		body := strings.TrimLeft(line, " ")
		ind := len(line) - len(body)
		blank := strings.TrimSpace(line) == ""
		switch {
		case fence != "":
			if ind < 4 && strings.HasPrefix(body, fence) && strings.TrimSpace(strings.TrimLeft(body, fence[:1])) == "" {
				fence = ""
			}
			b.WriteString(line)
		case ind < 4 && (strings.HasPrefix(body, "```") || strings.HasPrefix(body, "~~~")):
			fence = body[:3]
			b.WriteString(line)
		case !blank && (ind >= 4 || strings.HasPrefix(line, "\t")) && (inCode || prevBlank) && !inList:
			inCode = true
			b.WriteString(line)
		default:
			if !blank {
				inCode = false
				switch {
				case listItem(body):
					inList = true
				case ind == 0:
					inList = false
				}
			}
			// A code span may run over lines of one paragraph: take them together.
			j := i + 1
			for !blank && j < len(lines) && strings.TrimSpace(lines[j]) != "" && !strings.HasPrefix(strings.TrimLeft(lines[j], " "), "```") {
				j++
			}
			if j > i+1 {
				b.WriteString(escapeInline(strings.Join(lines[i:j], "")))
				i = j - 1
				blank = false
			} else {
				b.WriteString(escapeInline(line))
			}
		}
		prevBlank = blank
	}
	return b.String()
}

// listItem reports whether a line (without its indentation) starts a list item.
func listItem(body string) bool {
	if len(body) >= 2 && strings.ContainsRune("-*+", rune(body[0])) && (body[1] == ' ' || body[1] == '\t') {
		return true
	}
	n := 0
	for n < len(body) && n < 9 && body[n] >= '0' && body[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(body) && (body[n] == '.' || body[n] == ')') && body[n+1] == ' '
}

// escapeInline escapes HTML openers in a paragraph, leaving code spans (a
// run of n backticks up to the next run of exactly n) as they are.
func escapeInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2]) // already escaped: keep the pair
			i += 2
			continue
		case c == '`':
			n := run(s, i, '`')
			if end := closingRun(s, i+n, n); end >= 0 {
				b.WriteString(s[i : end+n])
				i = end + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case c == '<' && i+1 < len(s) && opensHTML(s[i+1]):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// run is the length of the run of c starting at i.
func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// closingRun is where the next run of exactly n backticks from i starts, or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		j := strings.IndexByte(s[i:], '`')
		if j < 0 {
			return -1
		}
		i += j
		m := run(s, i, '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func opensHTML(c byte) bool {
	return c == '/' || c == '!' || c == '?' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
