// Package mdrender renders the markdown models write for a terminal:
// headings, paragraphs wrapped to a width, emphasis, code spans and fenced
// code (with a small highlighter for a few languages), nested lists, block
// quotes, links, tables and rules. It replaces glamour, whose start-up
// (chroma's lexer and style registries, bluemonday and goldmark's regexps)
// was most of agentteam's process start; this package builds nothing at
// start-up.
//
// Raw HTML is not interpreted: "Vec<String>" shows as written. Control
// characters and escape sequences in the text are shown as '?', never sent
// to the terminal; nesting and line length cost linear time.
package mdrender

import (
	"strconv"
	"strings"
)

// Theme says how each element looks: SGR parameters ("1;34"), "" for none.
// With Plain, no escape sequence is written and emphasis markers stay.
type Theme struct {
	Plain                               bool
	Heading, Strong, Emph, Strike       string
	Code, Link, URL, Marker, TableHead  string
	CodeBlock, Keyword, String, Comment string
}

// The themes the TUI uses, in the 16 ANSI colours its own styles use.
var (
	Dark = Theme{Heading: "1;94", Strong: "1", Emph: "3", Strike: "9", Code: "91", Link: "4;96", URL: "2;36",
		Marker: "90", TableHead: "1", CodeBlock: "37", Keyword: "95", String: "92", Comment: "2;90"}
	Light = Theme{Heading: "1;34", Strong: "1", Emph: "3", Strike: "9", Code: "31", Link: "4;34", URL: "2;36",
		Marker: "90", TableHead: "1", CodeBlock: "30", Keyword: "35", String: "32", Comment: "2;90"}
	Plain = Theme{Plain: true}
)

// minWidth is the narrowest a text is wrapped to.
const minWidth = 8

// Render returns the lines of src rendered at most width cells wide (a
// line can be wider only when nesting leaves less than minWidth).
func Render(src string, width int, th *Theme) []string {
	if th == nil {
		th = &Plain
	}
	r := &renderer{th: th, sgr: map[style]string{}}
	return r.blocks(parseBlocks(splitLines(Sanitize(src)), 0), max(width, minWidth), false)
}

type renderer struct {
	th        *Theme
	sgr       map[style]string
	listDepth int
}

// Sanitize shows each control character (but newline and tab), DEL, C1
// control and bidirectional override as '?': an escape sequence in a
// model's text (or a tool's output) must not reach the terminal. A CR
// before LF is dropped.
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20, r >= 0x7f && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return '?'
		}
		return r // invalid UTF-8 comes out as U+FFFD
	}, s)
}

// splitLines cuts src into lines with tabs expanded to 4-column stops.
func splitLines(src string) []string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if strings.IndexByte(l, '\t') < 0 {
			continue
		}
		var b strings.Builder
		col := 0
		for _, r := range l {
			if r == '\t' {
				n := 4 - col%4
				b.WriteString("    "[:n])
				col += n
				continue
			}
			b.WriteRune(r)
			col++
		}
		lines[i] = b.String()
	}
	return lines
}

// paint wraps text in st's escape sequence.
func (r *renderer) paint(text string, st style) string {
	if r.th.Plain || st == 0 || text == "" {
		return text
	}
	seq, ok := r.sgr[st]
	if !ok {
		var params []string
		for k, p := range [...]string{r.th.Strong, r.th.Emph, r.th.Strike, r.th.Code, r.th.Link, r.th.URL,
			r.th.Heading, r.th.Marker, r.th.CodeBlock, r.th.Keyword, r.th.String, r.th.Comment, r.th.TableHead} {
			if st&(1<<k) != 0 && p != "" {
				params = append(params, p)
			}
		}
		if len(params) > 0 {
			seq = "\x1b[" + strings.Join(params, ";") + "m"
		}
		r.sgr[st] = seq
	}
	if seq == "" {
		return text
	}
	return seq + text + "\x1b[0m"
}

// line writes a line of pieces, one escape sequence per run of a style.
func (r *renderer) line(ps []piece) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i + 1
		var run strings.Builder
		run.WriteString(ps[i].text)
		for j < len(ps) && ps[j].st == ps[i].st {
			run.WriteString(ps[j].text)
			j++
		}
		b.WriteString(r.paint(run.String(), ps[i].st))
		i = j
	}
	return b.String()
}

func (r *renderer) lines(ls [][]piece) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = r.line(l)
	}
	return out
}

// blocks renders bs at width w; a blank line between them unless tight.
func (r *renderer) blocks(bs []*block, w int, tight bool) []string {
	var out []string
	for i, b := range bs {
		if i > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, r.block(b, w)...)
	}
	return out
}

func (r *renderer) block(b *block, w int) []string {
	plain := r.th.Plain
	switch b.kind {
	case kHeading:
		ps := append([]piece{{text: strings.Repeat("#", b.level) + " ", st: stHeading}}, inline(b.text, stHeading, plain)...)
		return r.lines(wrap(ps, w))
	case kCode:
		return r.code(b, w)
	case kQuote:
		bar, empty := r.paint("│ ", stMarker), r.paint("│", stMarker)
		inner := r.blocks(b.children, max(w-2, minWidth), false)
		for i, l := range inner {
			if l == "" {
				inner[i] = empty
			} else {
				inner[i] = bar + l
			}
		}
		return inner
	case kList:
		return r.list(b, w)
	case kRule:
		return []string{r.paint(strings.Repeat("─", w), stMarker)}
	case kTable:
		return r.table(b, w)
	}
	return r.lines(wrap(inline(b.text, 0, plain), w))
}

// bullets by nesting level.
var bullets = [...]string{"• ", "◦ ", "▪ "}

func (r *renderer) list(b *block, w int) []string {
	r.listDepth++
	defer func() { r.listDepth-- }()
	mw := 2
	if b.ordered {
		mw = len(strconv.Itoa(b.start+len(b.children)-1)) + 2
	}
	pad := strings.Repeat(" ", mw)
	var out []string
	for i, item := range b.children {
		if i > 0 && b.loose {
			out = append(out, "")
		}
		m := bullets[(r.listDepth-1)%len(bullets)]
		if b.ordered {
			n := strconv.Itoa(b.start + i)
			m = strings.Repeat(" ", mw-2-len(n)) + n + ". "
		}
		inner := r.blocks(item.children, max(w-mw, minWidth), !b.loose)
		if len(inner) == 0 {
			inner = []string{""}
		}
		for j, l := range inner {
			if j == 0 {
				out = append(out, r.paint(m, stMarker)+l)
			} else if l == "" {
				out = append(out, "")
			} else {
				out = append(out, pad+l)
			}
		}
	}
	return out
}

// code renders a code block two columns in, each line cut (not wrapped at
// spaces) to fit.
func (r *renderer) code(b *block, w int) []string {
	ls := spec(b.lang)
	inBlock := false
	var out []string
	for _, l := range strings.Split(b.text, "\n") {
		var ps []piece
		ps, inBlock = highlight(ls, l, inBlock)
		for _, wl := range hardWrap(ps, max(w-2, minWidth)) {
			out = append(out, "  "+r.line(wl))
		}
	}
	return out
}

// table renders a table with columns as wide as their widest cell, or
// narrowed (their cells wrapped) to fit w.
func (r *renderer) table(b *block, w int) []string {
	n := len(b.align)
	cells := make([][][]piece, len(b.rows))
	natural := make([]int, n)
	for i, row := range b.rows {
		cells[i] = make([][]piece, n)
		base := style(0)
		if i == 0 {
			base = stTableHead
		}
		for j, c := range row {
			cells[i][j] = inline(c, base, r.th.Plain)
			natural[j] = max(natural[j], piecesWidth(cells[i][j]), 1)
		}
	}
	widths := fitColumns(natural, w-3*(n-1))
	sep := r.paint(" │ ", stMarker)
	var out []string
	for i, row := range cells {
		wrapped := make([][][]piece, n)
		height := 1
		for j, c := range row {
			wrapped[j] = wrap(c, widths[j])
			height = max(height, len(wrapped[j]))
		}
		for k := 0; k < height; k++ {
			var b2 strings.Builder
			for j := range row {
				if j > 0 {
					b2.WriteString(sep)
				}
				var l []piece
				if k < len(wrapped[j]) {
					l = wrapped[j][k]
				}
				b2.WriteString(align(r.line(l), piecesWidth(l), widths[j], b.align[j]))
			}
			out = append(out, strings.TrimRight(b2.String(), " "))
		}
		if i == 0 {
			parts := make([]string, n)
			for j := range parts {
				parts[j] = strings.Repeat("─", widths[j])
			}
			out = append(out, r.paint(strings.Join(parts, "─┼─"), stMarker))
		}
	}
	return out
}

// align pads a cell's line of cw cells to width.
func align(s string, cw, width int, a byte) string {
	gap := max(width-cw, 0)
	switch a {
	case 'r':
		return strings.Repeat(" ", gap) + s
	case 'c':
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// fitColumns narrows the widest columns until they fit avail: each column
// is min(natural, c) for the largest cap c that fits, and what is left
// goes to the columns that were cut. A column is at least 1 wide.
func fitColumns(natural []int, avail int) []int {
	out := make([]int, len(natural))
	sum, most := 0, 0
	for _, v := range natural {
		sum += v
		most = max(most, v)
	}
	if sum <= avail {
		copy(out, natural)
		return out
	}
	total := func(c int) int {
		t := 0
		for _, v := range natural {
			t += min(v, c)
		}
		return t
	}
	lo, hi := 1, most // total(lo) may still exceed avail: then every column is 1 wide
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if total(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	left := avail - total(lo)
	for j, v := range natural {
		out[j] = min(v, lo)
		if v > lo && left > 0 {
			out[j]++
			left--
		}
	}
	return out
}
