package draw

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentteam/agentteam/internal/ui/mdrender"
)

// Fit makes lines exactly h lines of at most w cells each: long lines are
// cut, missing lines are blank, extra lines dropped from the end.
func Fit(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := 0; i < h && i < len(lines); i++ {
		out[i] = Clip(lines[i], w)
	}
	return out
}

// Width is lipgloss.Width(s), the cells a styled line takes, without
// segmenting ASCII into grapheme clusters: a printable ASCII byte before
// another ASCII byte (or the end) is a cluster of one cell, and a CSI
// sequence of parameters (the styles' SGR) takes none. The rest, a cluster at a time, is
// measured as Lip Gloss does; anything unusual (other escapes, controls,
// invalid UTF-8, several lines) goes to Lip Gloss whole.
func Width(s string) int {
	w := 0
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b >= 0x20 && b < 0x7f && (i+1 == len(s) || s[i+1] < 0x80):
			w++
			i++
		case b == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f { // parameters only; intermediates go to Lip Gloss
				j++
			}
			if j == len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return lipgloss.Width(s)
			}
			i = j + 1
		case b >= 0x20 && b != 0x7f:
			if r, size := utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && size <= 1 || r >= 0x80 && r < 0xa0 {
				return lipgloss.Width(s)
			}
			cluster, cw := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
			w += cw
			i += len(cluster)
		default:
			return lipgloss.Width(s)
		}
	}
	return w
}

// Clip cuts a styled line to w cells.
func Clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// Pad pads a styled line with spaces to exactly w cells (cutting it if longer).
func Pad(s string, w int) string {
	s = Clip(s, w)
	if n := w - Width(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// Wrap wraps plain text to w cells, keeping the text's own line
// breaks; control characters show as '?' (see mdrender.Sanitize).
func Wrap(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	s = mdrender.Sanitize(s)
	s = strings.ReplaceAll(s, "\t", "    ")
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if col := hangColumn(para, w); col > 0 {
			// An indented row of a table ("  /help   this list"): its
			// continuation lines start under the description.
			hang := ansi.StringWidth(para[:col])
			rest := strings.Split(ansi.Wrap(para[col:], w-hang, " "), "\n")
			out = append(out, para[:col]+rest[0])
			for _, l := range rest[1:] {
				out = append(out, strings.Repeat(" ", hang)+l)
			}
			continue
		}
		wrapped := ansi.Wrap(para, w, " ")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// hangColumn is where the description of an indented table row starts
// (after the first gap of two or more spaces), or 0 when the line is not
// such a row, fits, or the column would leave too little room.
func hangColumn(para string, w int) int {
	if !strings.HasPrefix(para, " ") || ansi.StringWidth(para) <= w {
		return 0
	}
	body := strings.TrimLeft(para, " ")
	gap := strings.Index(body, "  ")
	if gap < 0 {
		return 0
	}
	col := len(para) - len(body) + gap
	for col < len(para) && para[col] == ' ' {
		col++
	}
	if col >= len(para) || ansi.StringWidth(para[:col]) > w/2 {
		return 0
	}
	return col
}

// Columns puts two blocks of equal height side by side, the left padded to lw.
func Columns(left, right []string, lw int, sep string) []string {
	out := make([]string, len(left))
	for i := range left {
		r := ""
		if i < len(right) {
			r = right[i]
		}
		out[i] = Pad(left[i], lw) + sep + r
	}
	return out
}

// Tokens writes a token count compactly: 950, 1.2k, 3.4M.
func Tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return trimZero(float64(n)/1000) + "k"
	default:
		return trimZero(float64(n)/1_000_000) + "M"
	}
}

// Printable shows a model's control characters as '?': they could move
// the cursor and hide what is really asked.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsControl(r) && r != 0x7f {
			return r
		}
		return '?'
	}, s)
}

type Renderer interface{ Render(...string) string }

// Indent prefixes every line, styling it first when a style is given.
func Indent(lines []string, pre string, style ...Renderer) []string {
	for i, l := range lines {
		if len(style) > 0 {
			l = style[0].Render(l)
		}
		lines[i] = pre + l
	}
	return lines
}

// Plural is "1 word" or "n words".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Bytes is a size as people read it: 512 B, 64 KiB, 9.5 MiB.
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	}
	return trimZero(float64(n)/(1<<20)) + " MiB"
}
