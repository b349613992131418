package mdrender

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/clipperhouse/displaywidth"
)

// textWidth is the cells s takes (s holds no escape sequences).
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// cut splits s after at most room cells (at a grapheme's edge); at least
// one grapheme when force, so a line always makes progress.
func cut(s string, room int, force bool) (head, tail string, w int) {
	if room >= len(s) && textWidth(s) <= room {
		return s, "", textWidth(s)
	}
	g := displaywidth.StringGraphemes(s)
	at := 0
	for g.Next() {
		gw := g.Width()
		if w+gw > room && !(force && at == 0) {
			break
		}
		at += len(g.Value())
		w += gw
	}
	return s[:at], s[at:], w
}

// wrap breaks pieces into lines of at most w cells at spaces; a word longer
// than a line is cut. Runs of spaces become one; "\n" pieces break lines.
func wrap(ps []piece, w int) [][]piece {
	w = max(w, 1)
	var (
		lines   [][]piece
		cur     []piece
		curW    int
		word    []piece
		wordW   int
		space   bool // a space before the word
		spaceSt style
	)
	newLine := func() {
		lines = append(lines, cur)
		cur, curW = nil, 0
	}
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		sp := 0
		if curW > 0 && space {
			sp = 1
		}
		if curW > 0 && curW+sp+wordW > w {
			newLine()
			sp = 0
		}
		if sp == 1 {
			cur = append(cur, piece{text: " ", st: spaceSt})
			curW++
		}
		if curW+wordW <= w {
			cur = append(cur, word...)
			curW += wordW
		} else { // longer than a line: cut it
			for _, p := range word {
				t := p.text
				for t != "" {
					head, tail, hw := cut(t, w-curW, curW == 0)
					if head != "" {
						cur = append(cur, piece{text: head, st: p.st})
						curW += hw
					}
					t = tail
					if t != "" {
						newLine()
					}
				}
			}
		}
		word, wordW, space = word[:0], 0, false
	}
	for _, p := range ps {
		if p.text == "\n" {
			flushWord()
			newLine()
			space = false
			continue
		}
		t := p.text
		for t != "" {
			k := strings.IndexByte(t, ' ')
			if k < 0 {
				word = append(word, piece{text: t, st: p.st})
				wordW += textWidth(t)
				break
			}
			if k > 0 {
				word = append(word, piece{text: t[:k], st: p.st})
				wordW += textWidth(t[:k])
			}
			flushWord()
			space, spaceSt = true, p.st
			t = t[k+1:]
		}
	}
	flushWord()
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// hardWrap cuts pieces into lines of exactly w cells (the last shorter),
// keeping every space: for code.
func hardWrap(ps []piece, w int) [][]piece {
	w = max(w, 1)
	var lines [][]piece
	var cur []piece
	curW := 0
	for _, p := range ps {
		t := p.text
		for t != "" {
			head, tail, hw := cut(t, w-curW, curW == 0)
			if head != "" {
				cur = append(cur, piece{text: head, st: p.st})
				curW += hw
			}
			t = tail
			if t != "" {
				lines = append(lines, cur)
				cur, curW = nil, 0
			}
		}
	}
	return append(lines, cur)
}

// piecesWidth is the cells of a line of pieces.
func piecesWidth(ps []piece) int {
	n := 0
	for _, p := range ps {
		n += textWidth(p.text)
	}
	return n
}
