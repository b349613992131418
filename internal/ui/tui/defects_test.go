package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// TestTextInAngleBracketsShowsAsWritten: glamour strips raw HTML, so
// "Vec<String>" and "<b>bold</b>" vanished from replies and reports, and the
// no-key notice lost "<your key>".
func TestTextInAngleBracketsShowsAsWritten(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: false, Notice: NoModelNotice("OPENAI_API_KEY")})
	hs.mustSee("export OPENAI_API_KEY=<your key>")
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.Answer{Text: "use Vec<String> and <b>bold</b>; keep `a <b> c` and x<T>"}},
		event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "done: <div>kept</div>"}},
	))
	hs.mustSee("use Vec<String> and <b>bold</b>; keep a <b> c and x<T>", "done: <div>kept</div>")
	hs.mustNotSee(`\<`)
}

// TestAngleBracketsRenderAsWritten: the renderer reads no HTML, so text in
// angle brackets shows as written in prose, code spans, code blocks and
// list items alike (glamour needed each "<" escaped first).
func TestAngleBracketsRenderAsWritten(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a <b> c", "a <b> c"},
		{"a < b and a<=b", "a < b and a<=b"},
		{"`x <b>` and <i>", "x <b> and <i>"},
		{"``a ` <b>`` <c>", "a ` <b> <c>"},
		{"unclosed ` <b>", "unclosed ` <b>"},
		{"escaped \\<b>", "escaped <b>"},
		{"```go\nvar v Vec<T>\n```\n<p>", "  var v Vec<T>\n\n<p>"},
		{"text\n\n    indented <code>\n\nafter <x>", "text\n\n  indented <code>\n\nafter <x>"},
		{"- item\n\n    more <b>", "• item\n\n  more <b>"},
		{"span `over\nlines <b>` <i>", "span over lines <b> <i>"},
		{"<div>\nkept</div>", "<div> kept</div>"},
	}
	md := &draw.Markdown{}
	for _, c := range cases {
		lines := md.Render(c.in, 80)
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "  ")
		}
		if got := strings.Join(lines, "\n"); got != c.want {
			t.Errorf("render(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAPromptTypedWhileTheLeadStreamsLeavesNoStuckReply: the person sends
// again while the lead's reply streams. The reply stays one entry, ends
// rendered (no ▍) and is not shown a second time below the new prompt.
func TestAPromptTypedWhileTheLeadStreamsLeavesNoStuckReply(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("first prompt")
	hs.send(deltas("lead", false, "Working on the first"))
	hs.enter("second prompt")
	hs.send(deltas("lead", false, " prompt now"))
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "Working on the first prompt now."}}))
	v := hs.view()
	hs.mustNotSee("▍")
	if n := strings.Count(v, "Working on the first"); n != 1 {
		t.Fatalf("the reply shows %d times:\n%s", n, v)
	}
	if strings.Index(v, "Working on the first prompt now.") > strings.Index(v, "second prompt") {
		t.Errorf("the reply moved below the prompt typed after it:\n%s", v)
	}
	for _, e := range hs.m.lead.entries {
		if e.streaming {
			t.Fatalf("an entry is still streaming after the answer: %+v", e)
		}
	}
}

// TestAMessageFromAnotherTerminalShowsInTheLeadsConversation: `agentteam
// send --to lead` from another terminal reaches the lead's inbox. It shows
// in the lead's conversation where the lead took it in (its intake event,
// which comes before the turn that answers it), so always above the answer;
// what the inbox poll finds (the feed) adds nothing to the conversation, and
// the agents' own messages (shown from their events) are not added again.
func TestAMessageFromAnotherTerminalShowsInTheLeadsConversation(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(poll.Feed{Msgs: []inbox.Message{{From: "user", To: "lead", Type: inbox.TypeMessage, Content: "an old request"}}})
	hs.send(events(event.Event{Agent: "alice", Payload: event.Spawn{Role: "writer"}}))
	hs.send(events(event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "alice's draft is ready"}}))
	hs.send(events(event.Event{Agent: "lead", Payload: event.Intake{Messages: []inbox.Message{
		{From: "alice", To: "lead", Type: inbox.TypeResult, Content: "alice's draft is ready"},
		{From: "user", To: "lead", Type: inbox.TypeMessage, Content: "list team please"},
	}}}))
	hs.send(deltas("lead", false, "The team is alice."))
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "The team is alice."}}))
	var conv []string
	for _, e := range hs.m.lead.entries {
		conv = append(conv, e.who+": "+e.text)
	}
	want := []string{"alice: alice's draft is ready", "user: list team please", "lead: The team is alice."}
	if strings.Join(conv, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the lead's conversation:\n%s\nwant:\n%s", strings.Join(conv, "\n"), strings.Join(want, "\n"))
	}
	hs.mustSee("user → lead (message)", "list team please")
}

// TestHintOfAnInterruptGoesWhenTheLeadIsIdle: esc says the lead's turn is
// being interrupted; once the turn has ended, the hint goes.
func TestHintOfAnInterruptGoesWhenTheLeadIsIdle(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("do a long thing")
	hs.send(deltas("lead", false, "Starting"))
	hs.key(tea.KeyEsc)
	hs.mustSee("interrupting the lead's turn…")
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Interrupted: true}}))
	hs.mustNotSee("interrupting the lead's turn…")
}

// TestNotesWrapWithAHangingIndentAndAMargin: /help's rows continue under
// their description, and no note reaches the divider at the pane's edge.
func TestNotesWrapWithAHangingIndentAndAMargin(t *testing.T) {
	hs := newHarness(t, 100, 60, Options{HasModel: true})
	for _, w := range []int{80, 50} {
		lines := hs.m.r.render(&entry{kind: entryNote, text: helpText() + "\n" + keysText()}, w)
		for i, l := range lines {
			if width := lipgloss.Width(l); width > w-2 {
				t.Errorf("width %d: line %d is %d wide, touching the divider: %q", w, i, width, l)
			}
		}
		// Rows whose description starts within half the width hang under it.
		for _, row := range []struct{ head, desc string }{{"/spawn", "start a teammate"}, {"ctrl+j / alt+enter", "new line"}} {
			i := 0
			for i < len(lines) && !strings.Contains(lines[i], row.head) {
				i++
			}
			if i+1 >= len(lines) {
				t.Fatalf("width %d: no row %q with a next line:\n%s", w, row.head, strings.Join(lines, "\n"))
			}
			col := strings.Index(lines[i], row.desc)
			if col < 0 || col > w/2 {
				continue // the description starts too far right to hang under
			}
			indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
			// The next line is the next row, or this row's continuation under its description.
			if next := lines[i+1]; indent(next) != indent(lines[i]) && indent(next) != col {
				t.Errorf("width %d: %q continues at column %d, want %d under its description:\n%s\n%s", w, row.head, indent(next), col, lines[i], next)
			}
		}
	}
}

// TestHeaderIsNotCompletedWhileAPlanWaits: every teammate is idle, but one
// waits for its plan's approval: the team is not done.
func TestHeaderIsNotCompletedWhileAPlanWaits(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	alice := registry.Member{Name: "alice", Role: "writer", Status: registry.StatusIdle, Cycles: 1, PlanMode: true, PlanState: registry.PlanAwaitingApproval}
	hs.send(poll.Snapshot{Config: registry.Config{Teammates: []registry.Member{alice}}})
	hs.mustSee("awaiting plan approval")
	hs.mustNotSee("completed")
	alice.PlanState = registry.PlanApproved
	hs.send(poll.Snapshot{Config: registry.Config{Teammates: []registry.Member{alice}}})
	hs.mustSee("completed")
}

// TestTypingToAShutDownTeammateWarns: the message is still put in the
// inbox, but "sent" alone would hide that nobody reads it now.
func TestTypingToAShutDownTeammateWarns(t *testing.T) {
	hs := newHarness(t, 160, 30, Options{HasModel: true})
	hs.send(members("alice:shutdown"))
	hs.key(tea.KeyTab)
	hs.flush()
	if hs.m.focus != "alice" {
		t.Fatalf("focus %q after tab, want alice", hs.m.focus)
	}
	hs.enter("one more thing")
	hs.flush()
	if len(hs.eng.sent) != 1 {
		t.Fatalf("sent %v, want the message in alice's inbox", hs.eng.sent)
	}
	hs.mustSee("but alice is shutdown: nobody reads it unless alice is spawned again")
}

// TestKeyHelpWrapsItsDescriptions: ? shows every key's description whole,
// wrapped under itself, at every width.
func TestKeyHelpWrapsItsDescriptions(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 45}} {
		hs := newHarness(t, size[0], size[1], Options{HasModel: true})
		hs.send(tea.KeyPressMsg{Code: '?', Text: "?"})
		v := hs.view()
		checkScreen(t, v, size[0], size[1])
		var left []string // the conversation's column
		for _, l := range strings.Split(v, "\n") {
			c, _, _ := strings.Cut(l, "│")
			left = append(left, c)
		}
		words := strings.Join(strings.Fields(strings.Join(left, "\n")), " ")
		for _, k := range allKeys {
			if !strings.Contains(words, strings.Join(strings.Fields(k[1]), " ")) {
				t.Errorf("%dx%d: ? does not show %q whole:\n%s", size[0], size[1], k[1], v)
			}
		}
	}
}

// TestTheFocusedTeammateIsShownWhenTheTeamOverflows: at 80×24 the team
// panel has room for a few rows; the focused teammate is one of them.
func TestTheFocusedTeammateIsShownWhenTheTeamOverflows(t *testing.T) {
	hs := newHarness(t, 80, 24, Options{HasModel: true})
	hs.send(members("alice:idle", "bob:idle", "carol:idle", "dave:idle", "erin:idle", "frank:idle", "grace:idle"))
	for range 7 {
		hs.key(tea.KeyTab)
		hs.flush()
	}
	if hs.m.focus != "grace" {
		t.Fatalf("focus %q after seven tabs, want grace", hs.m.focus)
	}
	var row string
	for _, l := range strings.Split(hs.view(), "\n") {
		if strings.HasPrefix(l, "›") && strings.Contains(l, "grace tester") {
			row = l
		}
	}
	if row == "" {
		t.Fatalf("the focused grace is not in the team panel:\n%s", hs.view())
	}
	hs.mustSee("more (/team)")
}
