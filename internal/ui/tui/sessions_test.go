package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
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

// /sessions lists the lead's conversations of the real team's workspace,
// the archived ones too, and says how to go back to one.
func TestSessionsCommandListsTheLeadsConversations(t *testing.T) {
	tm := openDemoTeam(t, bridge.New())
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

// /sessions ID switches a real team's lead to an archived conversation:
// the pane shows it in place of the one it had, and the lead holds it.
func TestSessionsCommandSwitchesTheLeadsConversation(t *testing.T) {
	tm := openDemoTeam(t, bridge.New())
	if err := tm.Lead().Say(t.Context(), "today's question"); err != nil {
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
	list, err := sessions.List(tm.Workspace())
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
	tm := openDemoTeam(t, bridge.New())
	for id, text := range map[string]string{"20261120T090000.000": "the older chat", "20261121T090000.000": "the newer chat"} {
		if err := os.WriteFile(tm.Workspace().SessionPath("lead."+id), []byte(`{"role":"user","content":"`+text+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hs := newHarnessWith(t, 140, 40, Options{HasModel: false}, engine.NewEngine(tm, nil))
	hs.typeText("/sessions 2026")
	if c, _ := hs.m.pop.open(); len(c.items) != 0 {
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
	c, _ := hs.m.pop.open()
	if len(c.items) != 1 || c.items[0].value != "20261121T090000.000" {
		t.Fatalf("offered after the switch: %+v", c.items)
	}
}

// /sessions find TEXT lists the conversations whose title holds it.
func TestSessionsFindListsTheTitlesThatHoldIt(t *testing.T) {
	tm := openDemoTeam(t, bridge.New())
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
