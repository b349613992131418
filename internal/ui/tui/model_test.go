package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// busyScreen fills every pane with more than fits.
func busyScreen(hs *harness) {
	hs.send(members("alice:working", "bob:queued", "carol:idle", "dave:failed", "erin:shutdown",
		"a-very-long-teammate-name-that-goes-on:working"))
	var msgs []inbox.Message
	for i := 0; i < 30; i++ {
		msgs = append(msgs, inbox.Message{From: "alice", To: "lead", Type: "result", Content: strings.Repeat("long report ", 20)})
	}
	hs.send(poll.Feed{Msgs: msgs})
	for i := 0; i < 20; i++ {
		hs.m.in.set(fmt.Sprintf("message %d %s", i, strings.Repeat("wide-word ", 15)))
		hs.key(tea.KeyEnter)
		hs.flush()
		hs.send(events(
			event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"` + strings.Repeat("x", 200) + `"}`}},
			event.Event{Agent: "lead", Payload: event.Answer{Text: "# Title\n\n" + strings.Repeat("**bold** and `code` ", 30) + "\n\n```go\nfunc main() { println(\"" + strings.Repeat("y", 150) + "\") }\n```"}},
			event.Event{Payload: event.MessageDelivered{From: "bob", To: "lead", Type: "result", Content: strings.Repeat("a-word-without-any-space", 10)}},
		))
	}
	// A long status line: a teammate's error (a retry is only ever a few words).
	hs.send(events(event.Event{Agent: "bob", Payload: event.Failure{Class: event.ClassModel, Text: "rate limited, retrying in 4 s " + strings.Repeat("z", 100)}}))
	hs.send(deltas("lead", false, "streaming "+strings.Repeat("ü漢 ", 60)))
}

func TestViewFitsEverySize(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {250, 60}, {100, 30}, {99, 30}, {60, 15}, {40, 10}, {20, 5}, {12, 3}}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := newHarness(t, sz[0], sz[1], Options{HasModel: true, Auto: true, Workspace: "/some/where/deep/inside/a/workspace"})
			checkScreen(t, hs.view(), sz[0], sz[1])
			busyScreen(hs)
			checkScreen(t, hs.view(), sz[0], sz[1])
			hs.send(textKey("?"))
			checkScreen(t, hs.view(), sz[0], sz[1])
			hs.key(tea.KeyEsc)
			hs.key(tea.KeyTab)
			hs.flush()
			checkScreen(t, hs.view(), sz[0], sz[1])
		})
	}
}

func TestResizeRelaysOutAtOnce(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(members("alice:working"))
	wide := hs.view()
	if !strings.Contains(wide, "│") {
		t.Fatalf("at 120 columns the team should sit beside the conversation:\n%s", wide)
	}
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	narrow := hs.view()
	checkScreen(t, narrow, 80, 24)
	if strings.Contains(narrow, "│") {
		t.Fatalf("at 80 columns the panes should stack:\n%s", narrow)
	}
	hs.mustSee("alice", "Messages", "Team")
	hs.send(tea.WindowSizeMsg{Width: 200, Height: 50})
	checkScreen(t, hs.view(), 200, 50)
}

func TestStreamingDeltasWithRestart(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("hi")
	if len(hs.eng.said) != 1 || hs.eng.said[0] != "hi" {
		t.Fatalf("the lead was told %q, want [hi]", hs.eng.said)
	}
	hs.send(deltas("lead", false, "Draft that brok"))
	hs.mustSee("Draft that brok▍")
	// The stream broke off: what was shown is discarded, the retry's text follows.
	hs.send(bridge.Batch{Items: []bridge.Item{
		{Delta: &bridge.Chunk{Agent: "lead", Restart: true, Text: "Second "}},
	}})
	hs.send(deltas("lead", false, "try"))
	hs.mustSee("Second try▍")
	hs.mustNotSee("Draft that brok")
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "Second try, done."}}))
	hs.mustSee("Second try, done.")
	hs.mustNotSee("▍")
	if hs.m.leadBusy {
		t.Fatal("the lead is still shown busy after its answer")
	}
}

func TestStreamingStablePrefixIsRenderedOnce(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.send(deltas("lead", false, "# Plan\n\nfirst paragraph\n\nsecond"))
	hs.view()
	e := hs.m.lead.last()
	prefix := e.prefixLines
	if len(prefix) == 0 || e.prefixLen == 0 {
		t.Fatalf("the settled part was not rendered as markdown: %+v", e)
	}
	hs.send(deltas("lead", false, " paragraph grows"))
	hs.view()
	if &e.prefixLines[0] != &prefix[0] {
		t.Fatal("the settled prefix was rendered again for a token in the tail")
	}
	hs.mustSee("second paragraph grows▍")
}

func TestToolCallsAndReports(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(deltas("lead", false, "Let me check."))
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"go test ./..."}`, Result: "ok"}},
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "read_file", Args: `{"path":"missing.go"}`, Result: "error: no such file", IsError: true}},
		event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "tests pass"}},
		event.Event{Payload: event.MessageDelivered{From: "user", To: "lead", Type: "message", Content: "not a report"}},
	))
	hs.mustSee("Let me check.", "⚙ bash go test ./...  ✓", "⚙ read_file missing.go  ✗ no such file",
		"alice → lead (result)", "tests pass")
	hs.mustNotSee("not a report", "▍")
}

func TestTeamPanelStatusesReadWithoutColour(t *testing.T) {
	hs := newHarness(t, 200, 30, Options{HasModel: true, MaxWorkers: 5})
	snap := members("alice:working", "bob:queued", "carol:idle", "dave:failed", "erin:shutdown")
	snap.Config.Teammates[0].Turns, snap.Config.Teammates[0].Tokens = 3, 1200
	snap.Config.Teammates[3].Error = "model said no"
	snap.Unread["carol"] = 2
	hs.send(snap)
	hs.send(bridge.Batch{Activity: map[string]string{"alice": "running bash"}})
	v := hs.view()
	if strings.Contains(v, "\x1b[") {
		t.Fatalf("colour codes under the Ascii profile:\n%q", v)
	}
	hs.mustSee("⠋ alice tester working · running bash · 3 turns · 1.2k tok",
		"◔ bob tester queued · waiting for a worker",
		"○ carol tester idle · waiting for messages · ✉ 2",
		"✗ dave tester failed · model said no",
		"■ erin tester shutdown",
		"working 1/5, queued 1")
}

func TestFocusCyclesAndTypingGoesToTheInbox(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(members("alice:idle", "bob:working"))
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{
		{Role: "user", Content: "<message from=\"lead\" type=\"message\" id=\"1\">\nwrite the parser\n</message>"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "write_file", Arguments: `{"path":"parse.go","content":"x"}`}}}},
		{Role: "tool", ToolCallID: "c1", Content: "wrote parse.go"},
		{Role: "assistant", Content: "The parser is written."},
	}
	hs.key(tea.KeyTab)
	hs.flush()
	if hs.m.focus != "alice" {
		t.Fatalf("focus %q after tab, want alice", hs.m.focus)
	}
	hs.mustSee("alice · read-only", "lead → alice (message)", "write the parser", "⚙ write_file parse.go  ✓", "The parser is written.")
	hs.enter("add tests too")
	if len(hs.eng.sent) != 1 || hs.eng.sent[0] != [2]string{"alice", "add tests too"} {
		t.Fatalf("sent %v, want alice's inbox to get the text", hs.eng.sent)
	}
	if len(hs.eng.said) != 0 {
		t.Fatalf("the lead was told %v while alice was focused", hs.eng.said)
	}
	// New activity of the focused teammate rereads its conversation.
	hs.eng.convs["alice"] = append(hs.eng.convs["alice"], openai.ChatCompletionMessage{Role: "assistant", Content: "Tests added."})
	hs.send(events(event.Event{Agent: "alice", Payload: event.Reply{}}))
	hs.flush()
	hs.mustSee("Tests added.")

	hs.key(tea.KeyTab)
	hs.flush()
	hs.mustSee("bob's conversation") // bob is not run here: the fake has none
	hs.mustSee("not run by this agentteam process")
	hs.key(tea.KeyTab)
	if hs.m.focus != "" {
		t.Fatalf("focus %q after cycling past the last teammate, want the lead", hs.m.focus)
	}
	hs.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	hs.flush()
	if hs.m.focus != "bob" {
		t.Fatalf("shift+tab from the lead focused %q, want bob", hs.m.focus)
	}
	hs.key(tea.KeyEsc)
	if hs.m.focus != "" {
		t.Fatal("esc did not bring the focus back to the lead")
	}
}

func TestSlashCommands(t *testing.T) {
	cases := []struct {
		line  string
		check func(t *testing.T, hs *harness, cmd tea.Cmd)
	}{
		{"/help", func(t *testing.T, hs *harness, _ tea.Cmd) {
			hs.mustSee("/quit", "ctrl+c") /* the list outgrows the pane: its end shows */
		}},
		{"/team", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("NAME  ROLE  STATUS") }},
		{"/inbox", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("INBOX UNREAD TOTAL") }},
		{"/inbox alice", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("lead → alice (message): hello") }},
		{"/send bob hi there, bob", func(t *testing.T, hs *harness, _ tea.Cmd) {
			if len(hs.eng.sent) != 1 || hs.eng.sent[0] != [2]string{"bob", "hi there, bob"} {
				t.Fatalf("sent %v", hs.eng.sent)
			}
			hs.mustSee("sent to bob's inbox")
		}},
		{"/send bob", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("usage: /send name text") }},
		{"/broadcast stand up, all", func(t *testing.T, hs *harness, _ tea.Cmd) {
			if len(hs.eng.broadcasts) != 1 || hs.eng.broadcasts[0] != "stand up, all" {
				t.Fatalf("broadcasts %v", hs.eng.broadcasts)
			}
			hs.mustSee("broadcast to alice, bob")
		}},
		{"/spawn carol tester write the tests for parse.go", func(t *testing.T, hs *harness, _ tea.Cmd) {
			want := tools.SpawnSpec{Name: "carol", Role: "tester", Prompt: "write the tests for parse.go"}
			if len(hs.eng.spawns) != 1 || !reflect.DeepEqual(hs.eng.spawns[0], want) {
				t.Fatalf("spawns %v", hs.eng.spawns)
			}
		}},
		{"/spawn carol", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("usage: /spawn [--plan] name role prompt") }},
		{"/auto off", func(t *testing.T, hs *harness, _ tea.Cmd) {
			if hs.m.auto || len(hs.eng.auto) != 1 || hs.eng.auto[0] {
				t.Fatalf("auto %v, engine told %v", hs.m.auto, hs.eng.auto)
			}
			hs.mustSee("auto off")
		}},
		{"/clear", func(t *testing.T, hs *harness, _ tea.Cmd) {
			if len(hs.m.lead.entries) != 0 {
				t.Fatalf("%d entries left after /clear", len(hs.m.lead.entries))
			}
		}},
		{"/quit", func(t *testing.T, hs *harness, cmd tea.Cmd) {
			if cmd == nil {
				t.Fatal("/quit returned no command")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Fatal("/quit did not quit")
			}
		}},
		{"/frobnicate", func(t *testing.T, hs *harness, _ tea.Cmd) { hs.mustSee("unknown command /frobnicate") }},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			hs := newHarness(t, 140, 40, Options{HasModel: true, Auto: true})
			hs.eng.describe = "NAME  ROLE  STATUS\nalice tester idle"
			hs.eng.inboxes[""] = "INBOX UNREAD TOTAL\nalice 1 1"
			hs.eng.inboxes["alice"] = "lead → alice (message): hello"
			hs.m.lead.add(&entry{kind: entryNote, text: "earlier"})
			cmd := hs.enter(c.line)
			c.check(t, hs, cmd)
			if len(hs.eng.said) != 0 {
				t.Fatalf("a slash command reached the lead: %v", hs.eng.said)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(members("alice:idle", "albert:idle"))
	hs.typeText("/sp")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/spawn " {
		t.Fatalf("completed to %q, want /spawn", v)
	}
	hs.m.in.set("/send al")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/send al" {
		t.Fatalf("ambiguous name completed to %q", v)
	}
	hs.mustSee("albert  alice")
	hs.typeText("i")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/send alice " {
		t.Fatalf("completed to %q, want /send alice", v)
	}
	if hs.m.focus != "" {
		t.Fatal("tab in a command moved the focus")
	}
}

func TestPasteKeepsOneMessage(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.send(tea.PasteMsg{Content: "line one\nline two\r\nline three"})
	if len(hs.eng.said) != 0 {
		t.Fatal("a paste with new lines was sent before enter")
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	if len(hs.eng.said) != 1 || hs.eng.said[0] != "line one\nline two\nline three" {
		t.Fatalf("the lead was told %q, want the paste as one message", hs.eng.said)
	}
}

func TestNewlineKeysDoNotSend(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.typeText("a")
	hs.send(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
	hs.typeText("b")
	hs.send(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	hs.typeText("c")
	if len(hs.eng.said) != 0 {
		t.Fatalf("sent %v on a new-line key", hs.eng.said)
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	if len(hs.eng.said) != 1 || hs.eng.said[0] != "a\nb\nc" {
		t.Fatalf("the lead was told %q, want a\\nb\\nc", hs.eng.said)
	}
}

func TestHistoryUpDown(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("first")
	hs.enter("second\nwith two lines")
	hs.typeText("draft")
	hs.key(tea.KeyUp)
	if v := hs.m.in.value(); v != "second\nwith two lines" {
		t.Fatalf("up gave %q", v)
	}
	// The cursor is on the last line of a two-line entry: up moves the cursor first.
	hs.key(tea.KeyUp)
	if v := hs.m.in.value(); v != "second\nwith two lines" {
		t.Fatalf("up on the second line changed the input to %q", v)
	}
	hs.key(tea.KeyUp)
	if v := hs.m.in.value(); v != "first" {
		t.Fatalf("up on the first line gave %q, want first", v)
	}
	hs.key(tea.KeyDown)
	hs.key(tea.KeyDown)
	hs.key(tea.KeyDown)
	if v := hs.m.in.value(); v != "draft" {
		t.Fatalf("down past the newest gave %q, want the draft back", v)
	}
}

func TestEscInterruptsTheLead(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.key(tea.KeyEsc)
	if hs.eng.interrupts != 0 {
		t.Fatal("esc interrupted an idle lead")
	}
	hs.enter("do a long thing")
	hs.mustSee("esc interrupt")
	hs.key(tea.KeyEsc)
	if hs.eng.interrupts != 1 {
		t.Fatalf("%d interrupts, want 1", hs.eng.interrupts)
	}
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Interrupted: true}}))
	hs.mustSee("interrupted")
	hs.mustNotSee("esc interrupt")
}

func TestScrollKeepsPlaceAndFollows(t *testing.T) {
	hs := newHarness(t, 80, 24, Options{HasModel: true})
	for i := 0; i < 40; i++ {
		hs.m.lead.add(&entry{kind: entryNote, text: fmt.Sprintf("note %02d", i)})
	}
	hs.mustSee("note 39")
	hs.key(tea.KeyPgUp)
	hs.mustNotSee("note 39")
	hs.mustSee("more below")
	before := hs.view()
	hs.send(events(event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: "result", Content: "new report"}}))
	if hs.view() != before {
		t.Fatal("new output moved the text the person scrolled up to")
	}
	hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	hs.key(tea.KeyPgDown)
	hs.key(tea.KeyPgDown)
	hs.mustSee("new report")
	hs.mustNotSee("more below")
	hs.send(tea.KeyPressMsg{Code: tea.KeyHome})
	hs.mustSee("note 00")
	hs.send(tea.KeyPressMsg{Code: tea.KeyEnd})
	hs.mustSee("new report")
}

func TestNoModelStillWorks(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: false, Notice: NoModelNotice("OPENAI_API_KEY")})
	hs.mustSee("OPENAI_API_KEY")
	hs.enter("hello lead")
	if len(hs.eng.said) != 0 {
		t.Fatal("a message was given to a lead without a model")
	}
	hs.mustSee("--demo")
	hs.enter("/send alice hi")
	if len(hs.eng.sent) != 1 {
		t.Fatal("/send does not work without a model")
	}
}

// TestNoModelNamesTheProvidersKey: a provider whose api_key_env names
// another variable gets that name in the notice and in the answer.
func TestNoModelNamesTheProvidersKey(t *testing.T) {
	hs := newHarness(t, 200, 30, Options{HasModel: false, Notice: NoModelNotice("AZURE_OPENAI_API_KEY"), KeyEnv: "AZURE_OPENAI_API_KEY"})
	hs.mustSee("No model: AZURE_OPENAI_API_KEY is not set")
	hs.enter("hello lead")
	hs.mustSee("Set AZURE_OPENAI_API_KEY (export AZURE_OPENAI_API_KEY=<your key>")
	hs.mustNotSee("export OPENAI_API_KEY", "Set OPENAI_API_KEY")
}

func TestHelpShowsAllKeys(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.mustNotSee("home / end")
	hs.send(textKey("?"))
	hs.mustSee("home / end", "shift+tab", "ctrl+c")
	if hs.m.in.value() != "" {
		t.Fatal("? was typed into the input")
	}
	hs.key(tea.KeyEsc)
	hs.mustNotSee("home / end")
	hs.typeText("why?")
	if hs.m.in.value() != "why?" {
		t.Fatalf("? inside text was taken as a key: %q", hs.m.in.value())
	}
}

func TestErrorsInTheStatusLine(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true, ModelName: "gpt-x"})
	hs.send(events(event.Event{Agent: "lead", Payload: event.Retry{Attempt: 1, Cause: llm.RetryRateLimit, HTTPStatus: 429, Delay: 4 * time.Second}}))
	lines := strings.Split(hs.view(), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "gpt-x") || !strings.Contains(last, "lead: rate limited, retrying in 4 s") {
		t.Fatalf("status line %q", last)
	}
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "done"}}))
	hs.mustNotSee("rate limited")
}

func TestToolResultsExpand(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.send(events(event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"ls"}`, Result: "go.mod\nmain.go"}}))
	hs.mustSee("⚙ bash ls  ✓")
	hs.mustNotSee("main.go")
	hs.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	hs.mustSee("│ go.mod", "│ main.go")
	hs.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	hs.mustNotSee("main.go")
}

func TestLeadHistoryIsRestored(t *testing.T) {
	eng := &fakeEngine{convs: map[string][]openai.ChatCompletionMessage{"lead": {
		{Role: "user", Content: "what did we do yesterday?"},
		{Role: "assistant", Content: "We wrote the parser."},
	}}}
	var jobs []func() tea.Msg
	m := New(context.Background(), Options{HasModel: true, Notice: "welcome"}, eng, func(j func() tea.Msg) { jobs = append(jobs, j) })
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, j := range jobs {
		m.Update(j())
	}
	v := colourless(m.View().Content)
	iq, ia, iw := strings.Index(v, "what did we do yesterday?"), strings.Index(v, "We wrote the parser."), strings.Index(v, "welcome")
	if iq < 0 || ia < iq || iw < ia {
		t.Fatalf("want the restored conversation above the welcome:\n%s", v)
	}
}
