package mdrender

import "strings"

// maxDepth bounds the nesting of block quotes and lists: deeper markers are
// shown as text, so hostile input cannot make the parse or the indent grow
// without end.
const maxDepth = 12

// maxCols bounds a table's columns; cells past it are dropped.
const maxCols = 32

type kind uint8

const (
	kPara kind = iota
	kHeading
	kCode
	kQuote
	kList
	kItem
	kRule
	kTable
)

// block is one block of the document.
type block struct {
	kind     kind
	level    int    // a heading's level
	text     string // a paragraph's or heading's inline source; a code block's lines
	lang     string // a fenced code block's language
	children []*block
	ordered  bool // a list's kind, and the number of its first item
	start    int
	loose    bool // a list with blank lines between or inside its items
	rows     [][]string
	align    []byte // a table column's alignment: 'l', 'c' or 'r'
}

// indentOf is the number of leading spaces of line and the rest of it.
func indentOf(line string) (int, string) {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n, line[n:]
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// parseBlocks splits lines (tabs already expanded) into blocks; depth is
// the nesting of the containers they are in.
func parseBlocks(lines []string, depth int) []*block {
	var out []*block
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, &block{kind: kPara, text: strings.Join(para, "\n")})
			para = nil
		}
	}
	for i := 0; i < len(lines); {
		line := lines[i]
		ind, body := indentOf(line)
		if blank(body) {
			flush()
			i++
			continue
		}
		if ind >= 4 {
			if len(para) > 0 { // a lazy continuation of the paragraph
				para = append(para, body)
				i++
				continue
			}
			j := i
			var code []string
			for j < len(lines) {
				li, lb := indentOf(lines[j])
				if !blank(lb) && li < 4 {
					break
				}
				if li >= 4 {
					code = append(code, lines[j][4:])
				} else {
					code = append(code, "")
				}
				j++
			}
			for len(code) > 0 && code[len(code)-1] == "" {
				code = code[:len(code)-1]
			}
			out = append(out, &block{kind: kCode, text: strings.Join(code, "\n")})
			i = j
			continue
		}
		if marker, lang, ok := openFence(body); ok {
			flush()
			var code []string
			j := i + 1
			for ; j < len(lines); j++ {
				li, lb := indentOf(lines[j])
				if li < 4 && closesFence(lb, marker) {
					break
				}
				code = append(code, lines[j][min(li, ind):])
			}
			out = append(out, &block{kind: kCode, text: strings.Join(code, "\n"), lang: lang})
			i = j + 1 // past the closing fence, or the end: an unterminated fence runs to it
			continue
		}
		if level, text, ok := atxHeading(body); ok {
			flush()
			out = append(out, &block{kind: kHeading, level: level, text: text})
			i++
			continue
		}
		if len(para) > 0 {
			if level := setextUnderline(body); level > 0 {
				out = append(out, &block{kind: kHeading, level: level, text: strings.Join(para, "\n")})
				para = nil
				i++
				continue
			}
		}
		if isRule(body) {
			flush()
			out = append(out, &block{kind: kRule})
			i++
			continue
		}
		if i+1 < len(lines) && strings.Contains(body, "|") {
			if align := delimiterRow(strings.TrimSpace(lines[i+1])); align != nil {
				flush()
				t, next := parseTable(lines, i, align)
				out = append(out, t)
				i = next
				continue
			}
		}
		if depth < maxDepth && body[0] == '>' {
			flush()
			b, next := parseQuote(lines, i, depth)
			out = append(out, b)
			i = next
			continue
		}
		if depth < maxDepth {
			if m, ok := listMarker(body); ok && (len(para) == 0 || !m.ordered || m.num == 1) && (len(para) == 0 || !blank(body[m.width:])) {
				flush()
				b, next := parseList(lines, i, depth)
				out = append(out, b)
				i = next
				continue
			}
		}
		para = append(para, body)
		i++
	}
	flush()
	return out
}

// startsBlock reports whether a line (not blank) would begin a block other
// than a paragraph, so it cannot continue one lazily.
func startsBlock(line string) bool {
	ind, body := indentOf(line)
	if ind >= 4 {
		return false
	}
	if _, _, ok := openFence(body); ok {
		return true
	}
	if _, _, ok := atxHeading(body); ok {
		return true
	}
	if _, ok := listMarker(body); ok {
		return true
	}
	return isRule(body) || body[0] == '>'
}

// parseQuote takes the block quote starting at lines[i].
func parseQuote(lines []string, i, depth int) (*block, int) {
	var inner []string
	lazy := false // the last line taken was paragraph text
	for ; i < len(lines); i++ {
		ind, body := indentOf(lines[i])
		switch {
		case ind < 4 && strings.HasPrefix(body, ">"):
			body = strings.TrimPrefix(body[1:], " ")
			inner = append(inner, body)
			lazy = !blank(body)
			continue
		case lazy && !blank(body) && !startsBlock(lines[i]):
			inner = append(inner, body)
			continue
		}
		break
	}
	return &block{kind: kQuote, children: parseBlocks(inner, depth+1)}, i
}

// marker is a list item's marker.
type marker struct {
	ordered bool
	num     int
	char    byte // '-', '+', '*', or '.' / ')' after a number
	width   int  // the marker's bytes
}

// listMarker reads a list item's marker at the start of body.
func listMarker(body string) (marker, bool) {
	if len(body) == 0 {
		return marker{}, false
	}
	if c := body[0]; c == '-' || c == '+' || c == '*' {
		if len(body) == 1 || body[1] == ' ' {
			return marker{char: c, width: 1}, true
		}
		return marker{}, false
	}
	n, num := 0, 0
	for n < len(body) && n < 9 && body[n] >= '0' && body[n] <= '9' {
		num = num*10 + int(body[n]-'0')
		n++
	}
	if n == 0 || n >= len(body) || (body[n] != '.' && body[n] != ')') {
		return marker{}, false
	}
	if n+1 < len(body) && body[n+1] != ' ' {
		return marker{}, false
	}
	return marker{ordered: true, num: num, char: body[n], width: n + 1}, true
}

// parseList takes the list starting at lines[i]: items with the same kind
// of marker, each with the lines indented under its text.
func parseList(lines []string, i, depth int) (*block, int) {
	_, body := indentOf(lines[i])
	first, _ := listMarker(body)
	list := &block{kind: kList, ordered: first.ordered, start: first.num}
	for i < len(lines) {
		ind, body := indentOf(lines[i])
		m, ok := listMarker(body)
		if ind >= 4 || !ok || m.ordered != first.ordered || m.char != first.char || isRule(body) {
			break
		}
		rest := body[m.width:]
		sp, text := indentOf(rest)
		if sp > 4 || text == "" { // the text is indented code, or on the next line
			sp = min(sp, 1)
			text = rest[sp:]
		}
		off := ind + m.width + sp
		item := []string{text}
		i++
		lazy, blanks := !blank(text), 0
		for i < len(lines) {
			li, lb := indentOf(lines[i])
			switch {
			case blank(lb):
				item = append(item, "")
				blanks++
				lazy = false
				i++
				continue
			case li >= off:
				item = append(item, lines[i][off:])
				lazy = true
				i++
				continue
			case lazy && !startsBlock(lines[i]) && !isTableRowStart(lines, i):
				item = append(item, lb)
				i++
				continue
			}
			break
		}
		// Blank lines at the end belong between items (or after the list).
		trail := 0
		for len(item) > 1 && item[len(item)-1] == "" {
			item = item[:len(item)-1]
			trail++
		}
		if blanks > trail || (trail > 0 && i < len(lines) && nextIsItem(lines[i], first)) {
			list.loose = true
		}
		list.children = append(list.children, &block{kind: kItem, children: parseBlocks(item, depth+1)})
		if trail > 0 && (i >= len(lines) || !nextIsItem(lines[i], first)) {
			break
		}
	}
	return list, i
}

func nextIsItem(line string, first marker) bool {
	ind, body := indentOf(line)
	m, ok := listMarker(body)
	return ind < 4 && ok && m.ordered == first.ordered && m.char == first.char
}

func isTableRowStart(lines []string, i int) bool {
	return i+1 < len(lines) && strings.Contains(lines[i], "|") && delimiterRow(strings.TrimSpace(lines[i+1])) != nil
}

// openFence reads a code fence's opening line: its marker (the run of ` or
// ~) and the language, the first word after it.
func openFence(body string) (string, string, bool) {
	if len(body) < 3 || (body[0] != '`' && body[0] != '~') {
		return "", "", false
	}
	n := run(body, 0, body[0])
	if n < 3 {
		return "", "", false
	}
	info := strings.TrimSpace(body[n:])
	if body[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	lang, _, _ := strings.Cut(info, " ")
	return body[:n], strings.ToLower(lang), true
}

func closesFence(body, marker string) bool {
	n := run(body, 0, marker[0])
	return n >= len(marker) && blank(body[n:])
}

// atxHeading reads "## text ##".
func atxHeading(body string) (int, string, bool) {
	n := run(body, 0, '#')
	if n == 0 || n > 6 || (n < len(body) && body[n] != ' ') {
		return 0, "", false
	}
	text := strings.TrimSpace(body[n:])
	if t := strings.TrimRight(text, "#"); t == "" || strings.HasSuffix(t, " ") {
		text = strings.TrimSpace(t)
	}
	return n, text, true
}

// setextUnderline is 1 for "===", 2 for "---", else 0.
func setextUnderline(body string) int {
	t := strings.TrimSpace(body)
	if t == "" {
		return 0
	}
	switch {
	case strings.Trim(t, "=") == "":
		return 1
	case strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// isRule: three or more of one of - * _, spaces between allowed.
func isRule(body string) bool {
	c := body[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// delimiterRow reads a table's "| --- | :-: |" row: the alignment of each
// column, or nil when line is not one.
func delimiterRow(line string) []byte {
	if !strings.Contains(line, "-") {
		return nil
	}
	cells := splitRow(line)
	if len(cells) == 0 {
		return nil
	}
	align := make([]byte, 0, len(cells))
	for _, c := range cells {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		d := strings.Trim(c, ":")
		if d == "" || strings.Trim(d, "-") != "" {
			return nil
		}
		switch {
		case left && right:
			align = append(align, 'c')
		case right:
			align = append(align, 'r')
		default:
			align = append(align, 'l')
		}
	}
	if len(cells) == 1 && !strings.Contains(line, "|") {
		return nil // "---" alone is a rule or an underline
	}
	return align
}

// splitRow cuts a table row into cells at the pipes not escaped and not in a
// code span, without the outer pipes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	start, code := 0, false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '`':
			code = !code
		case '|':
			if !code {
				cells = append(cells, line[start:i])
				start = i + 1
			}
		}
		if len(cells) >= maxCols {
			return cells
		}
	}
	return append(cells, line[start:])
}

// parseTable takes the table whose header is lines[i].
func parseTable(lines []string, i int, align []byte) (*block, int) {
	t := &block{kind: kTable, align: align}
	add := func(line string) {
		cells := splitRow(line)
		row := make([]string, len(align))
		for c := range row {
			if c < len(cells) {
				row[c] = strings.ReplaceAll(strings.TrimSpace(cells[c]), `\|`, "|")
			}
		}
		t.rows = append(t.rows, row)
	}
	add(lines[i])
	i += 2
	for ; i < len(lines); i++ {
		ind, body := indentOf(lines[i])
		if blank(body) || (ind < 4 && startsBlock(lines[i]) && !strings.HasPrefix(body, "|")) {
			break
		}
		add(body)
	}
	return t, i
}

// run is the length of the run of c starting at i.
func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}
