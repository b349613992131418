package tui

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team"
)

// osc52Payload is the text an OSC 52 sequence in out carries; it fails
// the test unless out is exactly one well-formed sequence.
func osc52Payload(t *testing.T, out string) string {
	t.Helper()
	const pre, post = "\x1b]52;c;", "\x07"
	if !strings.HasPrefix(out, pre) || !strings.HasSuffix(out, post) || strings.Count(out, pre) != 1 {
		t.Fatalf("not one OSC 52 sequence: %q", out)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(out, pre), post))
	if err != nil {
		t.Fatalf("the payload is not base64: %v (%q)", err, out)
	}
	return string(raw)
}

// TestCopyPutsTheLastReplyOnTheClipboard: /copy writes the lead's last
// finished reply (not the person's prompt, not a tool call) as an OSC 52
// sequence whose base64 payload is the reply exactly, multi-byte text too.
func TestCopyPutsTheLastReplyOnTheClipboard(t *testing.T) {
	var clip bytes.Buffer
	hs := newHarness(t, 100, 30, Options{HasModel: true, Clipboard: &clip})
	hs.enter("first")
	hs.send(events(team.Event{Agent: "lead", Payload: team.Answer{Text: "old answer"}}))
	hs.enter("second")
	reply := "Use `Vec<String>` — ünïcödé ✓\nline two"
	hs.send(events(team.Event{Agent: "lead", Payload: team.Answer{Text: reply}}))
	hs.send(events(team.Event{Agent: "lead", Payload: team.ToolCall{Tool: "bash", Args: `{"command":"ls"}`}}))
	if clip.Len() != 0 {
		t.Fatal("the clipboard was written before /copy")
	}
	hs.enter("/copy")
	if got := osc52Payload(t, clip.String()); got != reply {
		t.Fatalf("copied %q, want the last reply %q", got, reply)
	}
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(reply)) + "\x07"
	if clip.String() != want {
		t.Fatalf("sequence %q, want %q", clip.String(), want)
	}
	hs.mustSee("copied the lead's last reply")
}

// TestCopyTheFocusedTeammatesLastMessage: with a teammate focused, /copy
// takes its last message; with nothing to copy it says so and writes nothing.
func TestCopyTheFocusedTeammatesLastMessage(t *testing.T) {
	var clip bytes.Buffer
	hs := newHarness(t, 100, 30, Options{HasModel: true, Clipboard: &clip})
	hs.enter("/copy")
	if clip.Len() != 0 {
		t.Fatalf("an empty conversation wrote %q", clip.String())
	}
	hs.mustSee("nothing to copy yet")
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "task"},
		{Role: openai.ChatMessageRoleAssistant, Content: "alice's first"},
		{Role: openai.ChatMessageRoleAssistant, Content: "alice's report"},
	}
	hs.send(members("alice:working"))
	hs.send(tea.KeyMsg{Type: tea.KeyTab})
	hs.flush()
	hs.enter("/copy")
	if got := osc52Payload(t, clip.String()); got != "alice's report" {
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
	if got := cmdMsgs(hs.enter("/mouse")); !hasMsgType(got, "tea.enableMouseCellMotionMsg") {
		t.Fatalf("/mouse did not enable the mouse: %v", got)
	}
	hs.mustSee("mouse on")
	if got := cmdMsgs(hs.enter("/mouse off")); !hasMsgType(got, "tea.disableMouseMsg") {
		t.Fatalf("/mouse off did not release the mouse: %v", got)
	}
	hs.enter("/mouse sideways")
	hs.mustSee("/mouse takes on or off")
	if hs.m.mouse {
		t.Fatal("a bad /mouse argument changed the mouse")
	}
}

// cmdMsgs runs a command, and a batch's commands, and returns the
// messages' types. Only for commands that do not wait (no ticks).
func cmdMsgs(cmd tea.Cmd) []string {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []string
		for _, c := range b {
			out = append(out, cmdMsgs(c)...)
		}
		return out
	}
	return []string{fmt.Sprintf("%T", msg)}
}

func hasMsgType(types []string, want string) bool {
	return slices.Contains(types, want)
}
