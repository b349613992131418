package tui

import (
	"fmt"
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team/event"
)

// copied is the text the command asks Bubble Tea to put on the clipboard
// (it writes the OSC 52 sequence itself); "" when it asks for none.
func copied(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	var got []string
	for _, msg := range cmdMsgList(cmd) {
		if fmt.Sprintf("%T", msg) == "tea.setClipboardMsg" {
			got = append(got, fmt.Sprint(msg))
		}
	}
	if len(got) > 1 {
		t.Fatalf("%d clipboard writes for one command: %q", len(got), got)
	}
	if len(got) == 0 {
		return ""
	}
	return got[0]
}

// TestCopyPutsTheLastReplyOnTheClipboard: /copy puts the lead's last
// finished reply (not the person's prompt, not a tool call) on the
// clipboard exactly, multi-byte text too.
func TestCopyPutsTheLastReplyOnTheClipboard(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	if got := copied(t, hs.enter("first")); got != "" {
		t.Fatalf("a message to the lead copied %q", got)
	}
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "old answer"}}))
	hs.enter("second")
	reply := "Use `Vec<String>` — ünïcödé ✓\nline two"
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: reply}}))
	hs.send(events(event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"ls"}`}}))
	cmd := hs.enter("/copy")
	hs.mustNotSee("copied the lead's last reply") // not before the clipboard is written
	if got := copied(t, cmd); got != reply {
		t.Fatalf("copied %q, want the last reply %q", got, reply)
	}
	hs.run(cmd)
	hs.mustSee("copied the lead's last reply")
}

// TestCopyTheFocusedTeammatesLastMessage: with a teammate focused, /copy
// takes its last message; with nothing to copy it says so and writes nothing.
func TestCopyTheFocusedTeammatesLastMessage(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	if got := copied(t, hs.enter("/copy")); got != "" {
		t.Fatalf("an empty conversation copied %q", got)
	}
	hs.mustSee("nothing to copy yet")
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "task"},
		{Role: openai.ChatMessageRoleAssistant, Content: "alice's first"},
		{Role: openai.ChatMessageRoleAssistant, Content: "alice's report"},
	}
	hs.send(members("alice:working"))
	hs.send(tea.KeyPressMsg{Code: tea.KeyTab})
	hs.flush()
	if got := copied(t, hs.enter("/copy")); got != "alice's report" {
		t.Fatalf("copied %q, want alice's last message", got)
	}
}

// TestMouseIsReleasedByDefaultAndToggles: the mouse is not captured at
// start (the terminal can select); /mouse captures and releases it.
func TestMouseIsReleasedByDefaultAndToggles(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	if hs.m.mouse {
		t.Fatal("the mouse is captured by default")
	}
	if got := hs.m.View().MouseMode; got != tea.MouseModeNone {
		t.Fatalf("the first frame captures the mouse (%v)", got)
	}
	hs.enter("/mouse")
	if got := hs.m.View().MouseMode; got != tea.MouseModeCellMotion {
		t.Fatalf("/mouse did not capture the mouse: %v", got)
	}
	hs.mustSee("mouse on")
	hs.enter("/mouse off")
	if got := hs.m.View().MouseMode; got != tea.MouseModeNone {
		t.Fatalf("/mouse off did not release the mouse: %v", got)
	}
	hs.enter("/mouse sideways")
	hs.mustSee("/mouse takes on or off")
	if hs.m.mouse {
		t.Fatal("a bad /mouse argument changed the mouse")
	}
}

// cmdMsgList runs a command, and a batch's or a sequence's commands, and
// returns their messages. Only for commands that do not wait (no ticks).
func cmdMsgList(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	// tea.BatchMsg, and Bubble Tea's unexported sequence, are lists of commands.
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		var out []tea.Msg
		for i := range v.Len() {
			out = append(out, cmdMsgList(v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}
