package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team/event"
)

func asked(agent, id, tool, subject, diff string) event.Event {
	return event.Event{Agent: agent, Payload: event.Permission{Tool: tool, Subject: subject, Decision: "asked", By: "user",
		Why: "mode ask asks before " + tool, RequestID: id, Diff: diff}}
}

func decided(agent, id, decision string) event.Event {
	return event.Event{Agent: agent, Payload: event.Permission{Tool: "bash", Decision: decision, By: "user", RequestID: id}}
}

func (hs *harness) press(s string) {
	hs.send(textKey(s))
	hs.flush()
}

func TestAsksQueueVisiblyAndAreAnsweredWithKeys(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{})
	diff := "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n"
	hs.send(events(
		asked("alice", "permission-1", "write_file", "notes.txt", diff),
		asked("bob", "permission-2", "bash", "go test ./...", ""),
		// A lead's ask is the lead's to answer: not queued for the person.
		event.Event{Agent: "carol", Payload: event.Permission{Tool: "bash", Subject: "ls", Decision: "asked", By: "lead", RequestID: "permission-3"}},
	))
	hs.mustSee("alice asks to run write_file notes.txt", "+hello", "(1 more waiting)", "y allow once", "A allow always", "n deny")
	hs.mustNotSee("carol")

	hs.press("y")
	if len(hs.eng.answers) != 1 || hs.eng.answers[0] != (answer{id: "permission-1", approve: true}) {
		t.Fatalf("y answered %+v", hs.eng.answers)
	}
	// The ask stays on screen until its decision arrives.
	hs.mustSee("alice asks to run write_file")
	hs.send(events(decided("alice", "permission-1", "allowed")))
	hs.mustSee("bob asks to run bash go test ./...")
	hs.mustNotSee("alice asks", "more waiting")

	hs.press("A")
	if len(hs.eng.answers) != 2 || hs.eng.answers[1] != (answer{id: "permission-2", approve: true, always: true}) {
		t.Fatalf("A answered %+v", hs.eng.answers)
	}
}

func TestDenyingAnAskAsksForTheReason(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{})
	hs.send(events(asked("bob", "permission-9", "bash", "rm -rf build", "")))
	hs.press("n")
	if len(hs.eng.answers) != 0 {
		t.Fatalf("n answered before a reason was typed: %+v", hs.eng.answers)
	}
	if v := hs.m.in.value(); v != "/deny permission-9 " {
		t.Fatalf("the input holds %q, want the /deny command to finish", v)
	}
	hs.enter("keep the build")
	if len(hs.eng.answers) != 1 || hs.eng.answers[0] != (answer{id: "permission-9", reason: "keep the build"}) {
		t.Fatalf("the denial sent %+v", hs.eng.answers)
	}
	// Typing a message is not taken for an answer.
	hs.send(events(asked("bob", "permission-10", "bash", "ls", "")))
	hs.typeText("hello")
	if v := hs.m.in.value(); v != "hello" || len(hs.eng.answers) != 1 {
		t.Fatalf("typing with an ask waiting: input %q, answers %+v", v, hs.eng.answers)
	}
}

func TestAnAsksControlCharactersAreNotSentToTheTerminal(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{})
	hs.send(events(asked("bob", "permission-7", "bash", "rm -rf ~ #\x1b[2K\rls", "")))
	v := hs.view()
	if strings.Contains(v, "\x1b[2K") || !strings.Contains(v, "rm -rf ~") {
		t.Fatalf("the ask's command reached the screen raw:\n%q", v)
	}
}

func TestAWritesDiffShowsInTheConversationWhenExpanded(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{})
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.Permission{Tool: "write_file", Subject: "a.txt", Decision: "allowed", By: "mode", Diff: "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+fresh line\n"}},
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "write_file", Args: `{"path":"a.txt","content":"fresh line\n"}`, Result: "Wrote 11 bytes to a.txt."}},
	))
	hs.mustSee("✎ wrote a.txt (+1 −0)")
	hs.mustNotSee("+fresh line")
	hs.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	hs.mustSee("Wrote 11 bytes to a.txt.", "+fresh line")
}

// A command with a prefix rule (go test *) offers it for the session as
// the second of the numbered choices; numbers and letters answer alike.
func TestAnAskOffersItsPrefixForTheSessionAsANumberedChoice(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{})
	ask := asked("bob", "permission-2", "bash", "go test ./...", "")
	p := ask.Payload.(event.Permission)
	p.Prefix = "bash(go test *)"
	ask.Payload = p
	hs.send(events(ask, asked("alice", "permission-3", "bash", "rm -rf build", "")))
	hs.mustSee("1 y allow once", "2 s allow bash(go test *) this session", "3 A allow always", "4 n deny")
	hs.press("2")
	if len(hs.eng.answers) != 1 || hs.eng.answers[0] != (answer{id: "permission-2", approve: true, session: true}) {
		t.Fatalf("2 answered %+v", hs.eng.answers)
	}
	// An ask with no prefix rule has three choices: 3 denies.
	hs.send(events(decided("bob", "permission-2", "allowed")))
	hs.mustSee("alice asks to run bash rm -rf build", "1 y allow once", "2 A allow always", "3 n deny")
	hs.mustNotSee("this session")
	hs.press("3")
	if v := hs.m.in.value(); len(hs.eng.answers) != 1 || v != "/deny permission-3 " {
		t.Fatalf("3 answered %+v and left %q in the input; want the /deny command to finish", hs.eng.answers, v)
	}
}

// An ask rings the terminal's bell, unless the terminal said the person
// looks at it.
func TestAnAskRingsTheBellUnlessTheTerminalHasFocus(t *testing.T) {
	rings := func(hs *harness, id string) bool {
		cmd := hs.send(events(asked("bob", id, "bash", "ls "+id, "")))
		return holdsRaw(cmd, "\a")
	}
	hs := newHarness(t, 100, 30, Options{})
	if !rings(hs, "permission-1") {
		t.Fatal("an ask rang no bell")
	}
	hs.send(tea.FocusMsg{})
	if rings(hs, "permission-2") {
		t.Fatal("an ask rang the bell while the terminal had focus")
	}
	hs.send(tea.BlurMsg{})
	if !rings(hs, "permission-3") {
		t.Fatal("an ask rang no bell once the terminal lost focus")
	}
}

// holdsRaw reports whether cmd, or a command of its batch, sends raw to
// the terminal.
func holdsRaw(cmd tea.Cmd, raw string) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.RawMsg:
		return msg.Msg == raw
	case tea.BatchMsg:
		for _, c := range msg {
			if holdsRaw(c, raw) {
				return true
			}
		}
	}
	return false
}
