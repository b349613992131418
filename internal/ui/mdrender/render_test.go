package mdrender

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func plain(src string, w int) string { return strings.Join(Render(src, w, &Plain), "\n") }

func TestRenderPlain(t *testing.T) {
	cases := []struct {
		name, in string
		w        int
		want     string
	}{
		{"heading and wrapped paragraph", "# Title\n\nthe quick brown fox jumps over the lazy dog", 20,
			"# Title\n\nthe quick brown fox\njumps over the lazy\ndog"},
		{"setext heading", "Title\n=====\ntext", 40, "# Title\n\ntext"},
		{"closing hashes dropped", "## Sub ##", 40, "## Sub"},
		{"soft and hard breaks", "one\ntwo  \nthree\\\nfour", 40, "one two\nthree\nfour"},
		{"emphasis markers stay without colour", "**bold** and *it* and ~~gone~~", 40, "**bold** and *it* and ~~gone~~"},
		{"code span without its backticks", "run `go test ./...` now", 40, "run go test ./... now"},
		{"escapes and entities", `\*not em\* a &amp; b &lt;c&gt;`, 40, "*not em* a & b <c>"},
		{"nested list", "- one\n- two\n  - inner\n    - deepest\n- three", 40,
			"• one\n• two\n  ◦ inner\n    ▪ deepest\n• three"},
		{"numbered list from its start", "3. c\n4. d\n10. j", 40, "3. c\n4. d\n5. j"},
		{"loose numbered list", "1. a\n\n2. b", 40, "1. a\n\n2. b"},
		{"wide numbers align", "9. a\n10. b", 40, " 9. a\n10. b"},
		{"item text wraps under itself", "- alpha beta gamma delta", 14, "• alpha beta\n  gamma delta"},
		{"loose list", "- a\n\n- b", 40, "• a\n\n• b"},
		{"list after a paragraph line", "Steps:\n- a\n- b", 40, "Steps:\n\n• a\n• b"},
		{"ordered not from 1 does not interrupt", "in\n2. x", 40, "in 2. x"},
		{"quote with lazy line", "> quoted\nlazy\n\nafter", 40, "│ quoted lazy\n\nafter"},
		{"nested quote", "> a\n>> b", 40, "│ a\n│\n│ │ b"},
		{"fenced code keeps its spaces", "```\n  x  =  1\n```", 40, "    x  =  1"},
		{"long code line is cut, not wrapped", "```\nabcdefghijKLMNOPQRST\n```", 12, "  abcdefghij\n  KLMNOPQRST"},
		{"tilde fence", "~~~\n```\n~~~", 40, "  ```"},
		{"indented code", "para\n\n    code line\n\nafter", 40, "para\n\n  code line\n\nafter"},
		{"link shows its address", "see [the docs](https://x.dev/a_(b)) now", 60, "see the docs (https://x.dev/a_(b)) now"},
		{"link whose text is its address", "[https://x.dev](https://x.dev)", 60, "https://x.dev"},
		{"image", "![a cat](cat.png)", 60, "image: a cat (cat.png)"},
		{"autolink", "<https://x.dev> and <b>", 60, "https://x.dev and <b>"},
		{"unmatched brackets", "a [b] c [d](e", 40, "a [b] c [d](e"},
		{"rule", "a\n\n---\n\nb", 5, "a\n\n────────\n\nb"},
		{"table", "| a | bb |\n|---|--:|\n| 1 | 22 |\n| 333 | 4 |", 40,
			"a   │ bb\n────┼───\n1   │ 22\n333 │  4"},
		{"table narrowed to fit", "| k | v |\n|---|---|\n| key | a long value here |", 16,
			"k   │ v\n────┼───────────\nkey │ a long\n    │ value here"},
		{"pipe in code span is kept", "| a | b |\n|---|---|\n| `x|y` | z |", 40, "a   │ b\n────┼──\nx|y │ z"},
		{"snake_case is not emphasis", "call some_func_name now", 40, "call some_func_name now"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := plain(c.in, c.w); got != c.want {
				t.Errorf("Render(%q, %d):\n%s\nwant:\n%s", c.in, c.w, got, c.want)
			}
		})
	}
}

func TestRenderDarkStyles(t *testing.T) {
	cases := []struct{ in, want string }{
		{"**bold**", "\x1b[1mbold\x1b[0m"},
		{"*it*", "\x1b[3mit\x1b[0m"},
		{"***both***", "\x1b[1;3mboth\x1b[0m"},
		{"**bold *and it***", "\x1b[1mbold \x1b[0m\x1b[1;3mand it\x1b[0m"},
		{"~~gone~~", "\x1b[9mgone\x1b[0m"},
		{"`code`", "\x1b[91mcode\x1b[0m"},
		{"# Head", "\x1b[1;94m# Head\x1b[0m"},
		{"[t](u)", "\x1b[4;96mt\x1b[0m (\x1b[2;36mu\x1b[0m)"},
		{"```go\nfunc f() // c\n```", "  \x1b[95mfunc\x1b[0m\x1b[37m f() \x1b[0m\x1b[2;90m// c\x1b[0m"},
		{"```py\nx = 'a' # c\n```", "  \x1b[37mx = \x1b[0m\x1b[92m'a'\x1b[0m\x1b[37m \x1b[0m\x1b[2;90m# c\x1b[0m"},
		{"```go\n/* a\nb */ x\n```", "  \x1b[2;90m/* a\x1b[0m\n  \x1b[2;90mb */\x1b[0m\x1b[37m x\x1b[0m"},
		{"```sh\necho a#b # c\n```", "  \x1b[95mecho\x1b[0m\x1b[37m a#b \x1b[0m\x1b[2;90m# c\x1b[0m"},
	}
	for _, c := range cases {
		if got := strings.Join(Render(c.in, 40, &Dark), "\n"); got != c.want {
			t.Errorf("Render(%q):\n%q\nwant\n%q", c.in, got, c.want)
		}
	}
	if Render("**a**", 40, &Light)[0] != "\x1b[1ma\x1b[0m" || !strings.Contains(Render("# H", 40, &Light)[0], "34m") {
		t.Errorf("the light theme: %q %q", Render("**a**", 40, &Light), Render("# H", 40, &Light))
	}
}

// sample is a document of every element, for the width checks.
const sample = "# A heading that is long enough to wrap\n\nSome **bold** text, `code`, *emphasis* and a [link](https://example.com/a/very/long/path/that/cannot/fit) in a paragraph.\n\n" +
	"- one item whose text wraps over more than one line of the pane\n  - a nested item with a `code span` inside it\n    1. numbered deeper\n\n" +
	"> a quote with **bold** that also wraps because it is long\n\n```go\nfunc main() { fmt.Println(\"a long line of code that has to be cut to fit the width\") }\n```\n\n" +
	"| name | value | note |\n|:-----|:-----:|-----:|\n| alpha | 1 | a longer note that wraps |\n| 漢字の名前 | ✓ | é |\n\n---\n\n" + "日本語の文章も折り返されるべきです。日本語の文章も折り返されるべきです。\n"

// TestEveryLineFitsItsWidth at widths from narrow to wide, both themes
// (below 18 the sample's nesting leaves less than minWidth for its text).
func TestEveryLineFitsItsWidth(t *testing.T) {
	for _, th := range []*Theme{&Plain, &Dark} {
		for w := 18; w <= 100; w++ {
			for _, l := range Render(sample, w, th) {
				if lw := ansi.StringWidth(l); lw > w {
					t.Fatalf("width %d: a line is %d wide: %q", w, lw, l)
				}
			}
		}
	}
	got := plain(sample, 60)
	for _, want := range []string{"a longer note", "漢字の名前", "(https://example.com/a/very/long/path/that/cannot/fit)", "1. numbered deeper"} {
		if !strings.Contains(strings.ReplaceAll(got, "\n", ""), want) {
			t.Errorf("%q is missing from:\n%s", want, got)
		}
	}
}

// TestCutKeepsWideCharactersWhole: a line of wide characters longer than
// the width is cut between characters, never inside one.
func TestCutKeepsWideCharactersWhole(t *testing.T) {
	src := strings.Repeat("漢", 25)
	lines := Render(src, 9, &Plain)
	if strings.Join(lines, "") != src {
		t.Fatalf("text lost: %q", lines)
	}
	for _, l := range lines[:len(lines)-1] {
		if ansi.StringWidth(l) != 8 {
			t.Fatalf("a line of %d cells at width 9: %q", ansi.StringWidth(l), l)
		}
	}
}
