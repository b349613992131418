package picker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team/sessions"
)

func pickerList() []sessions.Info {
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return []sessions.Info{
		{ID: sessions.CurrentID, Title: "fix the build", Time: day.Add(48 * time.Hour), Messages: 7, Current: true},
		{ID: "20261121T090000.000", Title: "write the docs", Time: day.Add(24 * time.Hour), Messages: 3},
		{ID: "20261120T090000.000", Title: "first chat", Time: day, Messages: 2},
	}
}

func pickerKey(p model, k string) (model, tea.Cmd) {
	var msg tea.KeyMsg
	switch k {
	case "up":
		msg = tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		msg = tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		msg = tea.KeyPressMsg{Code: tea.KeyEsc}
	default:
		msg = textKey(k)
	}
	m, cmd := p.Update(msg)
	return m.(model), cmd
}

// quits tells whether cmd is tea.Quit.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestSessionPickerChoosesWithTheKeys(t *testing.T) {
	p := newModel(pickerList())
	m, _ := p.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	p = m.(model)
	v := p.View().Content
	for _, want := range []string{"> current", "fix the build", "20261121T090000.000", "write the docs", "first chat", "esc leaves"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the picker lacks %q:\n%s", want, v)
		}
	}
	for _, k := range []string{"down", "down", "down", "up"} { // the end holds
		p, _ = pickerKey(p, k)
	}
	if v := p.View().Content; !strings.Contains(v, "> 20261121T090000.000") {
		t.Fatalf("the cursor is not on the second archive:\n%s", v)
	}
	p, cmd := pickerKey(p, "enter")
	if !quits(cmd) || p.chosen != "20261121T090000.000" {
		t.Fatalf("enter chose %q (quit %v)", p.chosen, quits(cmd))
	}
	for _, line := range strings.Split(p.View().Content, "\n") {
		if len([]rune(line)) > 80 {
			t.Fatalf("a line wider than the terminal: %q", line)
		}
	}
}

func TestSessionPickerLeavesWithoutChoosing(t *testing.T) {
	for _, k := range []string{"esc", "q"} {
		p := newModel(pickerList())
		p, _ = pickerKey(p, "j")
		p, cmd := pickerKey(p, k)
		if !quits(cmd) || p.chosen != "" {
			t.Fatalf("%s: chose %q (quit %v)", k, p.chosen, quits(cmd))
		}
	}
}

func TestSessionPickerCutsLongLinesToTheWidth(t *testing.T) {
	list := pickerList()
	list[1].Title = strings.Repeat("long title ", 20)
	m, _ := newModel(list).Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	for _, line := range strings.Split(m.View().Content, "\n")[2:] {
		if len([]rune(line)) > 60 {
			t.Fatalf("a line wider than 60 cells: %q", line)
		}
	}
}

// A long list scrolls with the cursor and never outgrows the terminal.
func TestSessionPickerScrollsALongList(t *testing.T) {
	var list []sessions.Info
	for i := 0; i < 50; i++ {
		list = append(list, sessions.Info{ID: fmt.Sprintf("20261120T0900%02d.000", i), Title: fmt.Sprintf("chat number %d", i)})
	}
	m, _ := newModel(list).Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	p := m.(model)
	check := func(wantCursor string) {
		t.Helper()
		v := p.View().Content
		if n := strings.Count(v, "\n") + 1; n > 24 || !strings.HasPrefix(v, "Resume which") {
			t.Fatalf("%d lines on a 24-line terminal:\n%s", n, v)
		}
		if !strings.Contains(v, "> "+wantCursor) || !strings.Contains(v, "of 50)") {
			t.Fatalf("cursor %s not shown, or no count:\n%s", wantCursor, v)
		}
	}
	check(list[0].ID)
	for i := 0; i < 40; i++ {
		p, _ = pickerKey(p, "down")
	}
	check(list[40].ID)
	p, _ = pickerKey(p, "G")
	check(list[49].ID)
	p, cmd := pickerKey(p, "enter")
	if !quits(cmd) || p.chosen != list[49].ID {
		t.Fatalf("chose %q", p.chosen)
	}
}

// textKey is the key press that types s.
func textKey(s string) tea.KeyPressMsg {
	r := []rune(s)
	if len(r) == 1 {
		return tea.KeyPressMsg{Code: r[0], Text: s}
	}
	return tea.KeyPressMsg{Code: tea.KeyExtended, Text: s}
}
