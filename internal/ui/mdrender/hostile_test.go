package mdrender

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// ourSGR is the only escape sequence the renderer writes.
var ourSGR = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestControlCharactersNeverReachTheTerminal: a model's text may carry
// escape sequences (colour, cursor moves, clearing the screen, OSC 52
// writing the clipboard, a title change), bells, C1 controls and bidi
// overrides. Each is shown as '?'; the only escape sequences in the output
// are the renderer's own colours.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	attacks := []string{
		"\x1b[31mred\x1b[0m",
		"\x1b[2J\x1b[H cleared",
		"\x1b]52;c;cm0gLXJmIC8=\x07 clipboard",
		"\x1b]0;title\x1b\\ title",
		"bell\x07 back\bspace nul\x00 del\x7f",
		"c1 \u009b2J csi and \u009d0;t\u009c osc",
		"bidi \u202eevil\u202c and \u2066iso\u2069",
		"cr\rover",
	}
	for _, a := range attacks {
		for _, where := range []string{"%s", "**%s**", "`%s`", "```\n%s\n```", "```go\n%s // %s\n```", "> %s", "- %s", "| h |\n|---|\n| %s |", "# %s", "[%s](%s)", "<https://x/%s>"} {
			src := strings.ReplaceAll(where, "%s", a)
			for _, th := range []*Theme{&Plain, &Dark} {
				out := strings.Join(Render(src, 60, th), "\n")
				rest := ourSGR.ReplaceAllString(out, "")
				for _, r := range rest {
					if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
						t.Fatalf("Render(%q) passes control %U to the terminal: %q", src, r, out)
					}
				}
				if th.Plain && strings.ContainsRune(out, 0x1b) {
					t.Fatalf("plain Render(%q) wrote an escape: %q", src, out)
				}
			}
		}
	}
	if got := plain("\x1b[31mred", 40); got != "?[31mred" {
		t.Errorf("an escape shows as %q, want ?[31mred", got)
	}
}

// TestHostileShapes: input shapes that make a naive renderer recurse
// without end, go quadratic or lose text. Each must render (a quadratic
// path on a megabyte takes minutes: the test's own time limit catches it)
// with every line inside the width and the text kept.
func TestHostileShapes(t *testing.T) {
	// A megabyte for the long lines; the shapes that stress the inline
	// parser are a quarter of that, enough to make a quadratic path show.
	const mb, kb256 = 1 << 20, 1 << 18
	long := strings.Repeat("abcdefghij", mb/10)
	cases := []struct {
		name, src string
		keep      string // text that must survive (spaces removed)
	}{
		{"1 MB word", long, long},
		{"1 MB of words", strings.Repeat("word ", mb/5), strings.Repeat("word", 1000)},
		{"1 MB code line", "```\n" + long + "\n```", long},
		{"1 MB table cell", "| a |\n|---|\n| " + long + " |", long},
		{"quotes nested 100000 deep", strings.Repeat(">", 100000) + " deep", "deep"},
		{"list nested 2000 deep", listNest(2000), "x1999"},
		{"bullets 50000 on one line", strings.Repeat("- ", 50000) + "x", "x"},
		{"unmatched openers", strings.Repeat("**a ", kb256/8), "**a**a"},
		{"unmatched underscores", strings.Repeat("_a ", kb256/6), "_a_a"},
		{"backtick runs of every length", backtickRuns(1400), "`"},
		{"link openers without their end", strings.Repeat("[a](b", kb256/5), "[a](b[a](b"},
		{"empty links", strings.Repeat("[](", kb256/3), "[]("},
		{"brackets", strings.Repeat("[", kb256/2) + strings.Repeat("]", kb256/2), "[[]]"},
		{"angle brackets", strings.Repeat("<a", kb256/2), "<a<a"},
		{"titles without their end", strings.Repeat(`[a](b "`, kb256/7), `[a](b"`},
		{"entities", strings.Repeat("&amp", kb256/4), "&amp&amp"},
		{"pipes", strings.Repeat("|a", kb256/2) + "\n|-|", "a"},
		{"unterminated fence", "text\n\n```go\nfunc f() {\n\t<b>not html</b>", "<b>nothtml</b>"},
		{"unterminated block comment", "```go\n/* " + long, long},
		{"unterminated string", "```go\n\"" + long, long},
		{"many lines", strings.Repeat("line\n", kb256/5), "lineline"},
		{"invalid UTF-8", "a\xff\xfeb **\xc3**", "a��b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, th := range []*Theme{&Plain, &Dark} {
				lines := Render(c.src, 80, th)
				var all strings.Builder
				for _, l := range lines {
					if w := ansi.StringWidth(l); w > 80+2*maxDepth+minWidth {
						t.Fatalf("a line %d cells wide", w)
					}
					all.WriteString(strings.ReplaceAll(ansi.Strip(l), " ", ""))
				}
				got := all.String()
				if !strings.Contains(got, c.keep) && !(th == &Dark && strings.Contains(c.keep, "*")) {
					t.Fatalf("%q is missing from the output (%d lines, starting %.200q)", c.keep, len(lines), got)
				}
			}
		})
	}
}

func listNest(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat("  ", i) + "- x" + itoa(i) + "\n")
	}
	return b.String()
}

// backtickRuns writes runs of 1, 2, … n backticks, none closed.
func backtickRuns(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Repeat("`", i) + " a ")
	}
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// BenchmarkRenderReply: a typical reply of every element, at 100 columns.
func BenchmarkRenderReply(b *testing.B) {
	for b.Loop() {
		Render(sample, 100, &Dark)
	}
}
