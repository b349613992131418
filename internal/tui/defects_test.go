package tui

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team"
)

// TestTextInAngleBracketsShowsAsWritten: glamour strips raw HTML, so
// "Vec<String>" and "<b>bold</b>" vanished from replies and reports, and the
// no-key notice lost "<your key>".
func TestTextInAngleBracketsShowsAsWritten(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: false, Notice: NoModelNotice})
	hs.mustSee("export OPENAI_API_KEY=<your key>")
	hs.send(events(
		team.Event{Agent: "lead", Payload: team.Answer{Text: "use Vec<String> and <b>bold</b>; keep `a <b> c` and x<T>"}},
		team.Event{Payload: team.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "done: <div>kept</div>"}},
	))
	hs.mustSee("use Vec<String> and <b>bold</b>; keep a <b> c and x<T>", "done: <div>kept</div>")
	hs.mustNotSee(`\<`)
}

func TestEscapeHTMLLeavesCodeAlone(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a <b> c", `a \<b> c`},
		{"a < b and a<=b", "a < b and a<=b"},
		{"`x <b>` and <i>", "`x <b>` and \\<i>"},
		{"``a ` <b>`` <c>", "``a ` <b>`` \\<c>"},
		{"unclosed ` <b>", "unclosed ` \\<b>"},
		{"already \\<b>", "already \\<b>"},
		{"```go\nvar v Vec<T>\n```\n<p>", "```go\nvar v Vec<T>\n```\n\\<p>"},
		{"text\n\n    indented <code>\n\nafter <x>", "text\n\n    indented <code>\n\nafter \\<x>"},
		{"- item\n\n    more <b>", "- item\n\n    more \\<b>"},
		{"span `over\nlines <b>` <i>", "span `over\nlines <b>` \\<i>"},
	}
	for _, c := range cases {
		if got := escapeHTML(c.in); got != c.want {
			t.Errorf("escapeHTML(%q) = %q, want %q", c.in, got, c.want)
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
	hs.send(events(team.Event{Agent: "lead", Payload: team.Answer{Text: "Working on the first prompt now."}}))
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
// send --to lead` from another terminal reaches the lead's inbox, and the
// screen learns of it from the inbox files only. It shows in the lead's
// conversation, before the lead's answer; the first poll's messages (the
// past, already in the restored conversation) and the agents' own messages
// (shown from their events) are not added again.
func TestAMessageFromAnotherTerminalShowsInTheLeadsConversation(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(feedMsg{history: true, msgs: []inbox.Message{{From: "user", To: "lead", Type: inbox.TypeMessage, Content: "an old request"}}})
	hs.send(events(team.Event{Agent: "alice", Payload: team.Spawn{Role: "writer"}}))
	hs.send(events(team.Event{Payload: team.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "alice's draft is ready"}}))
	hs.send(feedMsg{msgs: []inbox.Message{
		{From: "alice", To: "lead", Type: inbox.TypeResult, Content: "alice's draft is ready"},
		{From: "user", To: "lead", Type: inbox.TypeMessage, Content: "list team please"},
		{From: "user", To: "alice", Type: inbox.TypeMessage, Content: "for alice only"},
	}})
	hs.send(deltas("lead", false, "The team is alice."))
	hs.send(events(team.Event{Agent: "lead", Payload: team.Answer{Text: "The team is alice."}}))
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
