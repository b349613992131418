package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/atpath"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
)

// popupRows is the most items the pop-up shows at once.
const popupRows = 8

// popItem is one thing the pop-up offers.
type popItem struct {
	label, desc string
	value       string // what replaces the word being completed
	final       bool   // a space follows: the word is done (a directory is not)
}

// popup is the completion pop-up: what is chosen in it and whether esc
// closed it; what it lists is worked out from the input each time
// (completion), so it is never stale.
type popup struct {
	m      *Model
	sel    int    // the chosen item; -1 until ↑/↓ choose one
	closed string // the input esc closed the pop-up on: it stays closed until the input changes
}

// completion is the word before the cursor that can be completed and what
// can replace it; note says why the list is empty or short.
type completion struct {
	word  string
	items []popItem
	note  string
	path  bool // the word is an @path
}

// beforeCursor is the input's text on the cursor's line, up to the cursor.
func (in *input) beforeCursor() string {
	lines := strings.Split(in.ta.Value(), "\n")
	row := min(in.ta.Line(), len(lines)-1)
	li := in.ta.LineInfo()
	line := []rune(lines[row])
	return string(line[:min(li.StartColumn+li.ColumnOffset, len(line))])
}

// completion works out what the pop-up lists now. It does no IO: an
// @path's directory not yet read is asked for by wantListing.
func (p *popup) completion() completion {
	m := p.m
	v := m.in.value()
	if strings.HasPrefix(v, "/") && !strings.Contains(v, "\n") {
		return p.slash(v)
	}
	if !strings.Contains(v, "@") {
		return completion{} // the common case, on every frame
	}
	before := m.in.beforeCursor()
	word := before[strings.LastIndexAny(before, " \t")+1:]
	dirPart, prefix, ok := atpath.Word(word)
	if !ok || m.in.paths.Root == "" {
		return completion{}
	}
	c := completion{word: word, path: true}
	l, ok := m.in.paths.Read(atpath.DirKey(dirPart))
	switch {
	case !ok || l == nil:
		c.note = "reading " + displayDir(dirPart) + "…"
	case l.Err != "":
		c.note = l.Err
	default:
		c.items = pathItems(l, dirPart, prefix)
		if l.Cut {
			c.note = fmt.Sprintf("only the first %d entries of %s are offered", atpath.MaxDirEntries, displayDir(dirPart))
		} else if len(c.items) == 0 {
			c.note = "no file in " + displayDir(dirPart) + " starts with " + fmt.Sprintf("%q", prefix)
		}
	}
	return c
}

func displayDir(dirPart string) string {
	if dirPart == "" {
		return "the workspace"
	}
	return dirPart
}

// slash lists the commands, or the names a command takes, that
// fit the command line typed so far.
func (p *popup) slash(v string) completion {
	m := p.m
	fields := strings.Split(v, " ")
	var c completion
	switch len(fields) {
	case 1:
		c.word = fields[0]
		for _, sc := range engine.Commands() {
			if strings.HasPrefix(sc.Name, strings.ToLower(fields[0])) {
				c.items = append(c.items, popItem{label: strings.TrimSpace(sc.Name + " " + sc.Args), desc: sc.Help, value: sc.Name, final: true})
			}
		}
	case 2:
		c.word = fields[1]
		if strings.ToLower(fields[0]) == "/sessions" {
			c.items = m.sessions.items(fields[1])
			break
		}
		for _, cand := range argCandidates(fields[0], m.team.TeammateNames(), m.team.PlanNames(), m.opts.ModelLabels) {
			if strings.HasPrefix(cand, fields[1]) {
				c.items = append(c.items, popItem{label: cand, desc: m.team.MemberDesc(cand), value: cand, final: true})
			}
		}
	}
	if len(c.items) == 1 && c.items[0].value == c.word {
		return completion{} // typed whole: nothing left to offer
	}
	return c
}

// open reports whether the pop-up shows, with what it lists.
func (p *popup) open() (completion, bool) {
	m := p.m
	if p.closed != "" && p.closed == m.in.value() {
		return completion{}, false
	}
	c := p.completion()
	return c, len(c.items) > 0 || c.note != ""
}

// key handles one key press: the pop-up's keys first, then the screen's;
// after it, a pop-up shown for a changed input starts with nothing chosen.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	before := m.in.value()
	cmd, done := m.pop.key(k)
	if !done {
		cmd = m.handleKey(k)
	}
	if m.in.value() != before {
		m.pop.sel = -1
		m.pop.closed = ""
		if m.in.recalled() {
			// ↑/↓ go on through the history; typing in it completes again.
			m.pop.closed = m.in.value()
		}
	}
	m.pop.wantListing()
	return cmd
}

// wantListing asks for the directory an @path being typed names, if it
// was not read yet; the reading runs as a tea.Cmd, never here.
func (p *popup) wantListing() {
	m := p.m
	c := p.completion()
	if !c.path {
		return
	}
	dirPart, _, _ := atpath.Word(c.word)
	if _, cmd := m.in.paths.Listing(atpath.DirKey(dirPart)); cmd != nil {
		m.cmds = append(m.cmds, cmd)
	}
}

// key handles ↑/↓ (choose), tab and enter (take the chosen item) and
// esc (close) while the pop-up shows; done is false for any other key.
func (p *popup) key(k tea.KeyPressMsg) (tea.Cmd, bool) {
	m := p.m
	c, open := p.open()
	if !open || len(c.items) == 0 {
		if open && k.String() == "esc" {
			p.closed = m.in.value()
			return nil, true
		}
		return nil, false
	}
	n := len(c.items)
	sel := p.sel
	if sel >= n {
		sel = -1
	}
	switch k.String() {
	case "down":
		p.sel = (sel + 1) % n
		return nil, true
	case "up":
		if sel <= 0 {
			p.sel = n - 1
		} else {
			p.sel = sel - 1
		}
		return nil, true
	case "esc":
		p.closed = m.in.value()
		return nil, true
	case "tab", "enter":
		if sel < 0 {
			return nil, false
		}
		p.accept(c.word, c.items[sel])
		return nil, true
	}
	return nil, false
}

// tab is tab without a chosen item: a slash command's completion
// as it always was, or an @path's: the one name that fits, else as much
// as all that fit share, else the pop-up's first item is chosen. It
// reports false when there is nothing to complete (tab moves the focus).
func (p *popup) tab() bool {
	m := p.m
	v := m.in.value()
	ids := strings.HasPrefix(strings.ToLower(v), "/sessions ") // ids complete as @paths do
	if strings.HasPrefix(v, "/") && !ids {
		nv, cands := complete(v, m.team.TeammateNames(), m.team.PlanNames(), m.opts.ModelLabels)
		m.in.set(nv)
		if len(cands) > 1 {
			m.hint = strings.Join(cands, "  ")
		}
		return true
	}
	c := p.completion()
	if !c.path && !ids {
		return false
	}
	switch {
	case len(c.items) == 1:
		p.accept(c.word, c.items[0])
	case len(c.items) > 1:
		pre := c.items[0].value
		for _, it := range c.items[1:] {
			for !strings.HasPrefix(it.value, pre) {
				pre = pre[:len(pre)-1]
			}
		}
		if len(pre) > len(c.word) && strings.HasPrefix(pre, c.word) {
			p.replaceWord(c.word, pre)
		} else {
			p.sel = 0
		}
	}
	return true
}

// accept puts it in place of word; a directory is descended into.
func (p *popup) accept(word string, it popItem) {
	v := it.value
	if it.final {
		v += " "
	}
	p.replaceWord(word, v)
	p.sel = -1
}

// replaceWord swaps the word before the cursor for v.
func (p *popup) replaceWord(word, v string) {
	m := p.m
	if strings.HasPrefix(m.in.value(), "/") && !strings.Contains(m.in.value(), "\n") {
		// A command line is completed at its end, as tab always did.
		m.in.set(strings.TrimSuffix(m.in.value(), word) + v)
		return
	}
	for range []rune(word) {
		m.in.ta, _ = m.in.ta.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	m.in.ta.InsertString(v)
}

// lines are the pop-up's rows, drawn over the bottom of the body
// just above the input; nil when it is closed.
func (p *popup) lines(w int) []string {
	m := p.m
	c, open := p.open()
	if !open || w < 12 {
		return nil
	}
	st := m.st
	sel := p.sel
	if sel >= len(c.items) {
		sel = -1
	}
	start := 0
	if sel >= popupRows {
		start = sel - popupRows + 1
	}
	end := min(start+popupRows, len(c.items))
	labelW := 0
	for _, it := range c.items[start:end] {
		labelW = max(labelW, draw.Width(it.label))
	}
	labelW = min(labelW, w/2)
	var out []string
	for i := start; i < end; i++ {
		it := c.items[i]
		mark := "  "
		if i == sel {
			mark = "› "
		}
		row := mark + draw.Pad(draw.Clip(draw.Printable(it.label), labelW), labelW)
		if it.desc != "" {
			row += "  " + st.Dim.Render(draw.Printable(it.desc))
		}
		row = draw.Clip(row, w-1)
		if i == sel {
			row = st.Focus.Render(draw.Pad(row, w-1))
		}
		out = append(out, row)
	}
	var foot []string
	if n := len(c.items) - end; n > 0 {
		foot = append(foot, fmt.Sprintf("%d more", n))
	}
	if c.note != "" {
		foot = append(foot, c.note)
	}
	if len(c.items) > 0 {
		foot = append(foot, "↑/↓ choose · tab/enter take · esc close")
	} else {
		foot = append(foot, "esc close")
	}
	out = append(out, st.Dim.Render(draw.Clip(strings.Join(foot, " · "), w-1)))
	head := st.Dim.Render(strings.Repeat("─", w))
	return append([]string{head}, out...)
}

// overlay draws the pop-up over the last lines of body.
func (p *popup) overlay(body []string) []string {
	m := p.m
	pop := p.lines(m.scr.w)
	if len(pop) == 0 {
		return body
	}
	if len(pop) > len(body) {
		pop = pop[len(pop)-len(body):]
	}
	out := append([]string(nil), body[:len(body)-len(pop)]...)
	for _, l := range pop {
		out = append(out, draw.Pad(l, m.scr.w))
	}
	return out
}

// pathItems are the names in l that complete prefix: those that start
// with it, or ignoring case when none does. Names starting with a dot are
// offered only when the prefix starts with one.
func pathItems(l *atpath.Listing, dirPart, prefix string) []popItem {
	var exact, folded []popItem
	for _, e := range l.Entries {
		if strings.HasPrefix(e.Name, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		it := popItem{label: e.Name, value: "@" + dirPart + e.Name, final: !e.Dir}
		if e.Dir {
			it.label += "/"
			it.value += "/"
			it.desc = "directory"
		}
		switch {
		case strings.HasPrefix(e.Name, prefix):
			exact = append(exact, it)
		case strings.HasPrefix(strings.ToLower(e.Name), strings.ToLower(prefix)):
			folded = append(folded, it)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}
