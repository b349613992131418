package mdrender

import "strings"

// style is a set of inline styles of a piece of text.
type style uint16

const (
	stStrong style = 1 << iota
	stEmph
	stStrike
	stCode
	stLink
	stURL
	stHeading
	stMarker // list bullets, quote bars, table borders, rules
	stCodeBlock
	stKeyword
	stString
	stComment
	stTableHead
	styleCount = iota
)

// piece is text in one style; "\n" alone is a hard line break.
type piece struct {
	text string
	st   style
}

// maxLinkDepth bounds links inside link text.
const maxLinkDepth = 2

// maxURL bounds a link's destination, so a "[x](" without its ")" costs
// little however often it is written.
const maxURL = 4096

// inliner parses one paragraph's inline markup.
type inliner struct {
	src   string
	plain bool // keep emphasis markers as written (no colour to show them)
	// closeBracket maps the index of each "[" to its matching "]".
	closeBracket map[int]int
	// ticks lists where each length of backtick run starts, with a cursor per length.
	ticks map[int][]int
}

// inline parses src into pieces, each with base added to its style.
func inline(src string, base style, plain bool) []piece {
	p := &inliner{src: src, plain: plain}
	if strings.IndexByte(src, '[') >= 0 {
		p.closeBracket = matchBrackets(src)
	}
	if strings.IndexByte(src, '`') >= 0 {
		p.ticks = map[int][]int{}
		for i := 0; i < len(src); {
			if src[i] == '`' {
				n := run(src, i, '`')
				p.ticks[n] = append(p.ticks[n], i)
				i += n
				continue
			}
			i++
		}
	}
	return p.parse(0, len(src), base, 0)
}

// matchBrackets pairs each "[" with its "]" (nested pairs allowed) in one
// pass; backslash-escaped brackets do not count.
func matchBrackets(s string) map[int]int {
	m := map[int]int{}
	var stack []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			stack = append(stack, i)
		case ']':
			if len(stack) > 0 {
				m[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
			}
		}
	}
	return m
}

// delim is a run of emphasis characters in the token list.
type delim struct {
	tok             int // its token
	c               byte
	n               int // characters left unmatched
	canOpen, canClo bool
}

// token is a parsed part of the paragraph before emphasis is resolved.
type token struct {
	pieces []piece
	delim  bool // an emphasis run (its text is in pieces[0])
}

const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

func isPunct(c byte) bool { return c < 0x80 && strings.IndexByte(asciiPunct, c) >= 0 }
func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' }

// parse turns src[from:to] into pieces.
func (p *inliner) parse(from, to int, base style, depth int) []piece {
	s := p.src
	var toks []token
	var delims []delim
	var text strings.Builder
	textFlush := func() {
		if text.Len() > 0 {
			toks = append(toks, token{pieces: []piece{{text: text.String(), st: base}}})
			text.Reset()
		}
	}
	add := func(ps ...piece) {
		textFlush()
		toks = append(toks, token{pieces: ps})
	}
	for i := from; i < to; {
		c := s[i]
		switch {
		case c == '\\' && i+1 < to && s[i+1] == '\n':
			add(piece{text: "\n"})
			i += 2
			continue
		case c == '\\' && i+1 < to && isPunct(s[i+1]):
			text.WriteByte(s[i+1])
			i += 2
			continue
		case c == ' ':
			n := min(run(s, i, ' '), to-i)
			if n >= 2 && i+n < to && s[i+n] == '\n' {
				add(piece{text: "\n"})
			} else {
				text.WriteString(s[i : i+n])
			}
			i += n
			if n >= 2 && i < to && s[i] == '\n' {
				i++
			}
			continue
		case c == '\n':
			text.WriteByte(' ')
			i++
			continue
		case c == '`':
			n := run(s, i, '`')
			if end := p.closingTicks(i+n, n); end >= 0 && end < to {
				code := s[i+n : end]
				code = strings.ReplaceAll(code, "\n", " ")
				if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
					code = code[1 : len(code)-1]
				}
				if p.plain {
					add(piece{text: code, st: base})
				} else {
					add(piece{text: code, st: base | stCode})
				}
				i = end + n
				continue
			}
			text.WriteString(s[i : i+n])
			i += n
			continue
		case c == '*' || c == '_' || c == '~':
			n := run(s, i, c)
			if i+n > to {
				n = to - i
			}
			var before, after byte = ' ', ' '
			if i > from {
				before = s[i-1]
			}
			if i+n < to {
				after = s[i+n]
			}
			left := !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before))
			right := !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after))
			open, clo := left, right
			if c == '_' {
				open = left && (!right || isPunct(before))
				clo = right && (!left || isPunct(after))
			}
			if c == '~' && n != 2 {
				open, clo = false, false
			}
			textFlush()
			if open || clo {
				delims = append(delims, delim{tok: len(toks), c: c, n: n, canOpen: open, canClo: clo})
			}
			toks = append(toks, token{pieces: []piece{{text: s[i : i+n], st: base}}, delim: open || clo})
			i += n
			continue
		case c == '<':
			// The scan stops at the next space or "<": each byte is looked at once.
			end := i + 1
			for end < to && s[end] != '>' && s[end] != '<' && !isSpace(s[end]) {
				end++
			}
			if end < to && s[end] == '>' && isAutolink(s[i+1:end]) {
				add(piece{text: s[i+1 : end], st: base | stLink})
				i = end + 1
				continue
			}
		case c == '&':
			if r, n := entity(s[i:to]); n > 0 {
				text.WriteString(r)
				i += n
				continue
			}
		case c == '[' || (c == '!' && i+1 < to && s[i+1] == '['):
			open := i
			if c == '!' {
				open = i + 1
			}
			if ps, next, ok := p.link(open, to, base, depth, c == '!'); ok {
				add(ps...)
				i = next
				continue
			}
		}
		text.WriteByte(c)
		i++
	}
	textFlush()
	p.emphasis(toks, delims)
	var out []piece
	for _, t := range toks {
		out = append(out, t.pieces...)
	}
	return out
}

// closingTicks is where the next run of exactly n backticks at or after i
// starts, or -1; each length's list is walked once for the whole paragraph.
func (p *inliner) closingTicks(i, n int) int {
	list := p.ticks[n]
	for len(list) > 0 && list[0] < i {
		list = list[1:]
	}
	p.ticks[n] = list
	if len(list) == 0 {
		return -1
	}
	return list[0]
}

// link reads "[text](url)" at s[open] ("![alt](src)" when image).
func (p *inliner) link(open, to int, base style, depth int, image bool) ([]piece, int, bool) {
	s := p.src
	closeAt, ok := p.closeBracket[open]
	if !ok || closeAt >= to || closeAt+1 >= to || s[closeAt+1] != '(' || depth >= maxLinkDepth {
		return nil, 0, false
	}
	// The destination: up to ")" outside one level of parentheses, no spaces.
	i, lim := closeAt+2, min(to, closeAt+2+maxURL)
	for i < lim && s[i] == ' ' {
		i++
	}
	start, par := i, 0
	// It stops at "[" too: each byte is scanned for one link at most.
	for i < lim && !isSpace(s[i]) && s[i] != '[' {
		if s[i] == '(' {
			par++
		} else if s[i] == ')' {
			if par == 0 {
				break
			}
			par--
		}
		i++
	}
	url := s[start:i]
	for i < lim && s[i] == ' ' {
		i++
	}
	if i < lim && (s[i] == '"' || s[i] == '\'') { // a title: skipped
		q, e := s[i], i+1
		for e < lim && s[e] != q && s[e] != '[' {
			e++
		}
		if e < lim && s[e] == q {
			i = e + 1
		}
		for i < lim && s[i] == ' ' {
			i++
		}
	}
	if i >= lim || s[i] != ')' {
		return nil, 0, false
	}
	url = strings.TrimSuffix(strings.TrimPrefix(url, "<"), ">")
	var out []piece
	if image {
		out = append(out, piece{text: "image: ", st: base | stLink})
	}
	label := p.parse(open+1, closeAt, base|stLink, depth+1)
	out = append(out, label...)
	if url != "" && url != plainText(label) {
		out = append(out, piece{text: " (", st: base}, piece{text: url, st: base | stURL}, piece{text: ")", st: base})
	}
	return out, i + 1, true
}

func plainText(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.text)
	}
	return b.String()
}

// isAutolink: "<https://…>", "<mailto:…>", no spaces.
func isAutolink(u string) bool {
	if strings.ContainsAny(u, " <\n") {
		return false
	}
	for _, scheme := range []string{"http://", "https://", "mailto:", "ftp://"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// entity decodes the few HTML entities models write.
func entity(s string) (string, int) {
	for _, e := range [...][2]string{{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}} {
		if strings.HasPrefix(s, e[0]) {
			return e[1], len(e[0])
		}
	}
	return "", 0
}

// emphasisLookBack bounds how far a closer looks for its opener, so a line
// of a million unmatched delimiters stays linear.
const emphasisLookBack = 64

// emphasis pairs delimiter runs (the CommonMark idea, simplified): each
// closer takes the nearest opener of the same character; the text between
// gets the style. Matched markers vanish, or stay when plain (no colour
// would show the style); unmatched ones are text.
func (p *inliner) emphasis(toks []token, delims []delim) {
	if len(delims) == 0 || p.plain {
		return // plain: the markers stay, as written
	}
	type span struct {
		from, to int
		st       style
	}
	var spans []span
	var openers []int // indexes into delims
	for d := range delims {
		cl := &delims[d]
		if cl.canClo {
			for k := len(openers) - 1; k >= 0 && k >= len(openers)-emphasisLookBack && cl.n > 0; k-- {
				op := &delims[openers[k]]
				if op.c != cl.c || op.n == 0 {
					continue
				}
				use, st := 1, stEmph
				switch {
				case cl.c == '~':
					use, st = 2, stStrike
				case op.n >= 2 && cl.n >= 2:
					use, st = 2, stStrong
				}
				spans = append(spans, span{op.tok + 1, cl.tok, st})
				trimRun(&toks[op.tok], use, true)
				trimRun(&toks[cl.tok], use, false)
				op.n -= use
				cl.n -= use
				openers = openers[:k+1]
				if op.n == 0 {
					openers = openers[:k]
				}
				k = len(openers)
			}
		}
		if cl.canOpen && cl.n > 0 {
			openers = append(openers, d)
		}
	}
	if len(spans) == 0 {
		return
	}
	// Add each span's style to the tokens it covers, by counting.
	var count [styleCount][]int32
	for _, sp := range spans {
		k := bit(sp.st)
		if count[k] == nil {
			count[k] = make([]int32, len(toks)+1)
		}
		count[k][sp.from]++
		count[k][sp.to]--
	}
	var run [styleCount]int32
	for t := range toks {
		var add style
		for k := range count {
			if count[k] != nil {
				run[k] += count[k][t]
				if run[k] > 0 {
					add |= 1 << k
				}
			}
		}
		if add != 0 {
			for j := range toks[t].pieces {
				if toks[t].pieces[j].text != "\n" {
					toks[t].pieces[j].st |= add
				}
			}
		}
	}
}

// trimRun takes n marker characters off a delimiter token (from its inner
// side: the end of an opener, the start of a closer).
func trimRun(t *token, n int, opener bool) {
	txt := t.pieces[0].text
	if opener {
		t.pieces[0].text = txt[:len(txt)-n]
	} else {
		t.pieces[0].text = txt[n:]
	}
}

func bit(s style) int {
	for k := 0; k < styleCount; k++ {
		if s == 1<<k {
			return k
		}
	}
	return 0
}
