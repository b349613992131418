package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team"
)

func pickerList() []team.SessionInfo {
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return []team.SessionInfo{
		{ID: team.CurrentSessionID, Title: "fix the build", Time: day.Add(48 * time.Hour), Messages: 7, Current: true},
		{ID: "20261121T090000.000", Title: "write the docs", Time: day.Add(24 * time.Hour), Messages: 3},
		{ID: "20261120T090000.000", Title: "first chat", Time: day, Messages: 2},
	}
}

func pickerKey(p sessionPicker, k string) (sessionPicker, tea.Cmd) {
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
	return m.(sessionPicker), cmd
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
	p := newSessionPicker(pickerList())
	m, _ := p.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	p = m.(sessionPicker)
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
		p := newSessionPicker(pickerList())
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
	m, _ := newSessionPicker(list).Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	for _, line := range strings.Split(m.View().Content, "\n")[2:] {
		if len([]rune(line)) > 60 {
			t.Fatalf("a line wider than 60 cells: %q", line)
		}
	}
}

// /sessions lists the lead's conversations of the real team's workspace,
// the archived ones too, and says how to go back to one.
func TestSessionsCommandListsTheLeadsConversations(t *testing.T) {
	tm := openDemoTeam(t, NewBridge())
	path := tm.Workspace().SessionPath("lead.20261120T090000.000")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"role":"user","content":"the archived chat"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.enter("/sessions")
	hs.flush()
	hs.mustSee("20261120T090000.000", "the archived chat", "/sessions ID switches")
}

func TestSessionsCommandWithNoneSaysSo(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{})
	hs.enter("/sessions")
	hs.flush()
	hs.mustSee("no sessions to list here")
	if got := engine.FormatSessions(nil); got != "no conversations with the lead yet" {
		t.Fatalf("empty list: %q", got)
	}
	text := engine.FormatSessions(pickerList())
	if n := strings.Count(text, "\n"); n != len(pickerList())+1 {
		t.Fatalf("%d lines, want a header, %d sessions and the hint:\n%s", n+1, len(pickerList()), text)
	}
}

// A long list scrolls with the cursor and never outgrows the terminal.
func TestSessionPickerScrollsALongList(t *testing.T) {
	var list []team.SessionInfo
	for i := 0; i < 50; i++ {
		list = append(list, team.SessionInfo{ID: fmt.Sprintf("20261120T0900%02d.000", i), Title: fmt.Sprintf("chat number %d", i)})
	}
	m, _ := newSessionPicker(list).Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	p := m.(sessionPicker)
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

// /sessions ID switches a real team's lead to an archived conversation:
// the pane shows it in place of the one it had, and the lead holds it.
func TestSessionsCommandSwitchesTheLeadsConversation(t *testing.T) {
	tm := openDemoTeam(t, NewBridge())
	if err := tm.Lead().Say("today's question"); err != nil {
		t.Fatal(err)
	}
	const old = "20261120T090000.000"
	path := tm.Workspace().SessionPath("lead." + old)
	if err := os.WriteFile(path, []byte(`{"role":"user","content":"the archived chat"}`+"\n"+
		`{"role":"assistant","content":"the archived reply"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.flush()
	hs.mustSee("today's question")

	hs.enter("/sessions " + old + " more")
	hs.mustSee("usage: /sessions [ID]")
	hs.enter("/sessions 20991231T000000.000")
	hs.mustSee("no session 20991231T000000.000")
	hs.mustSee("today's question")

	hs.enter("/sessions " + old)
	hs.mustSee("the archived chat", "the archived reply", "switched the lead to conversation "+old, "untouched")
	hs.mustNotSee("today's question")
	msgs, _ := tm.Conversation("lead")
	if len(msgs) != 2 || msgs[0].Content != "the archived chat" {
		t.Fatalf("the lead's conversation after the switch: %+v", msgs)
	}
	list, err := team.ListSessions(tm.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Title != "the archived chat" || list[1].Title != "today's question" {
		t.Fatalf("sessions after the switch: %+v", list)
	}
	// The conversation switched away from is one /sessions ID away.
	hs.enter("/sessions " + list[1].ID)
	hs.mustSee("today's question")
	hs.mustNotSee("the archived chat")
}

func TestSessionsSwitchWithoutATeamSaysSo(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{})
	hs.enter("/sessions 20261120T090000.000")
	hs.mustSee("no sessions to switch to here")
}

// After /sessions has listed them, the earlier conversations' ids complete
// /sessions ID: in the pop-up with their titles, and with tab.
func TestSessionsIDsComplete(t *testing.T) {
	tm := openDemoTeam(t, NewBridge())
	for id, text := range map[string]string{"20261120T090000.000": "the older chat", "20261121T090000.000": "the newer chat"} {
		if err := os.WriteFile(tm.Workspace().SessionPath("lead."+id), []byte(`{"role":"user","content":"`+text+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.typeText("/sessions 2026")
	if c, _ := hs.m.popupOpen(); len(c.items) != 0 {
		t.Fatalf("ids offered before any list: %+v", c.items)
	}
	hs.m.in.set("")
	hs.enter("/sessions")
	hs.typeText("/sessions 2026")
	hs.mustSee("20261121T090000.000", "the newer chat", "the older chat")
	hs.typeText("1120")
	hs.key(tea.KeyTab)
	if got := hs.m.in.value(); got != "/sessions 20261120T090000.000 " {
		t.Fatalf("tab completed to %q", got)
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	hs.mustSee("switched the lead to conversation 20261120T090000.000", "the older chat")
	// The id switched to is no longer an earlier conversation.
	hs.typeText("/sessions 2026")
	c, _ := hs.m.popupOpen()
	if len(c.items) != 1 || c.items[0].value != "20261121T090000.000" {
		t.Fatalf("offered after the switch: %+v", c.items)
	}
}

// /sessions find TEXT lists the conversations whose title holds it.
func TestSessionsFindListsTheTitlesThatHoldIt(t *testing.T) {
	tm := openDemoTeam(t, NewBridge())
	for stamp, said := range map[string]string{"20261120T090000.000": "the parser work", "20261121T090000.000": "the lexer work"} {
		path := tm.Workspace().SessionPath("lead." + stamp)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"role":"user","content":"`+said+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.enter("/sessions find PARSER")
	hs.flush()
	hs.mustSee("20261120T090000.000", "the parser work")
	hs.mustNotSee("the lexer work")
	hs.enter("/sessions find nothing like it")
	hs.flush()
	hs.mustSee(`no conversation's title holds "nothing like it"`)
}
