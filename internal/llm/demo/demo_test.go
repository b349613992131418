package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func both(t *testing.T, f func(t *testing.T, stream bool)) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { f(t, stream) })
	}
}

func oneCall(t *testing.T, tr turn, tool string, args map[string]any) {
	t.Helper()
	if len(tr.calls) != 1 {
		t.Fatalf("want one %s call, got content %q calls %+v", tool, tr.content, tr.calls)
	}
	c := tr.calls[0]
	var got map[string]any
	if err := json.Unmarshal([]byte(c.Function.Arguments), &got); err != nil {
		t.Fatalf("arguments %q: %v", c.Function.Arguments, err)
	}
	if c.Function.Name != tool || !maps.Equal(got, args) || c.ID == "" {
		t.Fatalf("got %s %v (id %q), want %s %v", c.Function.Name, got, c.ID, tool, args)
	}
}

func TestLeadPhrases(t *testing.T) {
	tests := []struct {
		prompt string
		tool   string
		args   map[string]any
	}{
		{"spawn alice as coder", "spawn_teammate", map[string]any{"name": "alice", "role": "coder", "prompt": defaultSpawnPrompt}},
		{"SPAWN bob As senior tester to write tests for parse.go", "spawn_teammate",
			map[string]any{"name": "bob", "role": "senior tester", "prompt": "write tests for parse.go"}},
		{"tell alice to message bob: the build is green", "send_message", map[string]any{"to": "alice", "content": "message bob: the build is green"}},
		{"Send alice: please review main.go", "send_message", map[string]any{"to": "alice", "content": "please review main.go"}},
		{"broadcast: stand-up in five", "broadcast", map[string]any{"content": "stand-up in five"}},
		{"List Team", "list_teammates", map[string]any{}},
		{"read inbox", "read_inbox", map[string]any{}},
		{inbox("user", "message", "list team"), "list_teammates", map[string]any{}},
	}
	both(t, func(t *testing.T, stream bool) {
		for _, tt := range tests {
			tr := ask(t, "lead", stream, conv(leadTools, sys("You are the lead."), user(tt.prompt)))
			oneCall(t, tr, tt.tool, tt.args)
		}
	})
}

func TestLeadUnknownTextListsPhrases(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		tr := ask(t, "lead", stream, conv(leadTools, sys("lead"), user("make me a sandwich")))
		if len(tr.calls) != 0 || !strings.Contains(tr.content, "make me a sandwich") ||
			!strings.Contains(tr.content, "spawn NAME as ROLE") || !strings.Contains(tr.content, "read inbox") {
			t.Fatalf("got %+v", tr)
		}
	})
}

func TestLeadRunsCommandsInOrderThenSummarises(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(leadTools, sys("lead"), said("earlier answer"),
			user("spawn alice as coder; send zed: hi\nlist team; juggle"))
		tr := ask(t, "lead", stream, req)
		oneCall(t, tr, "spawn_teammate", map[string]any{"name": "alice", "role": "coder", "prompt": defaultSpawnPrompt})
		req = then(req, tr, "spawned alice (coder), status queued")

		tr = ask(t, "lead", stream, req)
		oneCall(t, tr, "send_message", map[string]any{"to": "zed", "content": "hi"})
		req = then(req, tr, `error: unknown recipient "zed"`)
		// A teammate's report arrives between turns.
		req.Messages = append(req.Messages, user(inbox("alice", "result", "alice (coder): ready — hello")))

		tr = ask(t, "lead", stream, req)
		oneCall(t, tr, "list_teammates", map[string]any{})
		req = then(req, tr, "alice  coder  idle")

		tr = ask(t, "lead", stream, req)
		for _, want := range []string{"spawn alice as coder: done", `could not send zed a message: error: unknown recipient "zed"`,
			"alice  coder  idle", `did not understand "juggle"`, "alice: done — ready — hello"} {
			if !strings.Contains(tr.content, want) {
				t.Errorf("summary lacks %q:\n%s", want, tr.content)
			}
		}
		if len(tr.calls) != 0 {
			t.Fatalf("summary turn made calls %+v", tr.calls)
		}
	})
}

// After the prompt's answer, a wake's reports are answered with what is
// new: a line per report, not the commands or the earlier reports again.
func TestLeadAnswersReportsWithWhatIsNew(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(leadTools, sys("lead"), user("spawn alice as coder"), said("Here is what I did"),
			user(inbox("alice", "result", "old news")), said("- alice: done — old news"),
			user(inbox("alice", "result", "alice (coder): sent to bob: hi")+"\n"+inbox("bob", "message", "thanks")),
			user(inbox("carol", "error", "model unavailable")))
		tr := ask(t, "lead", stream, req)
		want := "- alice: done — sent to bob: hi\n- bob says: thanks\n- carol: failed — model unavailable"
		if tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("got %q, want %q", tr.content, want)
		}
	})
}

// Three teammates report in three wakes: the prompt's answer is the only
// "Here is what I did"; each later answer is the new reporter's line.
func TestLeadAnswersEachReportInItsOwnWake(t *testing.T) {
	req := conv(leadTools, sys("lead"), user("spawn alice as programmer; spawn bob as tester; spawn carol as reviewer"))
	for _, result := range []string{"spawned alice", "spawned bob", "spawned carol"} {
		tr := ask(t, "lead", false, req)
		if len(tr.calls) != 1 {
			t.Fatalf("want one call, got %+v", tr)
		}
		req = then(req, tr, result)
	}
	tr := ask(t, "lead", false, req)
	if !strings.HasPrefix(tr.content, "Here is what I did:\n- spawn alice as programmer: done") {
		t.Fatalf("the prompt's answer: %q", tr.content)
	}
	req = then(req, tr)
	long := "alice (programmer): ready — " + strings.Repeat("wrote a lot ", 20) + "\nand a second line"
	for _, w := range []struct{ report, want string }{
		{inbox("alice", "result", long), "- alice: done — ready — " + strings.Repeat("wrote a lot ", 7) + "wro…"}, // 100 bytes,
		{inbox("bob", "error", "model unavailable\nretry later"), "- bob: failed — model unavailable"},
		{protocol("carol", "plan_approval_request", "plan-1a2b3c4d", planRequest), "- carol asks to approve a plan (plan-1a2b3c4d)"},
	} {
		req.Messages = append(req.Messages, user(w.report))
		tr := ask(t, "lead", false, req)
		if tr.content != w.want || len(tr.calls) != 0 {
			t.Fatalf("got %q, want %q", tr.content, w.want)
		}
		req = then(req, tr)
	}
}

const aliceSystem = "You are a teammate.\nYour name: alice\nYour role: coder\nTeam lead: lead"

func TestTeammateAcknowledgesSpawnPrompt(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(teammateTools, sys(aliceSystem), user(inbox("lead", "message", defaultSpawnPrompt)))
		tr := ask(t, "alice", stream, req)
		if want := "alice (coder): ready — " + defaultSpawnPrompt; tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("got %+v, want %q", tr, want)
		}
	})
}

func TestTeammateExchange(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		// alice is told by the lead to message bob.
		alice := conv(teammateTools, sys(aliceSystem), user(inbox("lead", "message", "Say hi")), said("alice (coder): ready — Say hi"),
			user(inbox("lead", "message", "message bob: the build is green")))
		tr := ask(t, "alice", stream, alice)
		oneCall(t, tr, "send_message", map[string]any{"to": "bob", "content": "the build is green"})
		alice = then(alice, tr, "sent to bob")
		tr = ask(t, "alice", stream, alice)
		if want := "alice (coder): sent to bob: the build is green"; tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("alice final %+v, want %q", tr, want)
		}

		// bob receives it and acknowledges.
		bob := conv(teammateTools, sys("Your name: bob\nYour role: tester"), user(inbox("lead", "message", "Say hi")),
			said("bob (tester): ready — Say hi"), user(inbox("alice", "message", "the build is green")))
		tr = ask(t, "bob", stream, bob)
		if want := "bob (tester): received from alice: the build is green"; tr.content != want {
			t.Fatalf("bob got %q, want %q", tr.content, want)
		}
	})
}

func TestTeammateSpawnedWithForward(t *testing.T) {
	req := conv(teammateTools, sys(aliceSystem), user(inbox("lead", "message", "message bob: hello")))
	tr := ask(t, "alice", false, req)
	oneCall(t, tr, "send_message", map[string]any{"to": "bob", "content": "hello"})
	req = then(req, tr, `error: unknown recipient "bob"`)
	tr = ask(t, "alice", false, req)
	if !strings.HasPrefix(tr.content, `alice (coder): ready — could not message bob: error: unknown recipient`) {
		t.Fatalf("got %q", tr.content)
	}
}

func TestTeammateReplyIsShort(t *testing.T) {
	long := strings.Repeat("très long message ", 40)
	req := conv(teammateTools, sys(aliceSystem), user(inbox("lead", "message", "hi")), said("ok"),
		user(inbox("bob", "message", long)), user(inbox("lead", "broadcast", long)))
	tr := ask(t, "alice", false, req)
	if len(tr.content) >= 300 || !strings.HasPrefix(tr.content, "alice (coder): received from bob: très") || !strings.HasSuffix(tr.content, "…") {
		t.Fatalf("%d bytes: %q", len(tr.content), tr.content)
	}
}

func TestStreamingComesInPieces(t *testing.T) {
	tr := ask(t, "lead", true, conv(leadTools, sys("lead"), user("tell alice to message bob: a fairly long text here")))
	if tr.chunks < 6 {
		t.Fatalf("only %d chunks: arguments should be split", tr.chunks)
	}
	if tr.usage == nil || tr.usage.TotalTokens == 0 {
		t.Fatalf("no usage chunk: %+v", tr.usage)
	}
	tr = ask(t, "lead", true, conv(leadTools, sys("lead"), user("hello?")))
	if tr.chunks < 10 {
		t.Fatalf("only %d chunks for a long text", tr.chunks)
	}
}

func TestStrictLikeTheRealService(t *testing.T) {
	req := conv(leadTools, sys("lead"), user("list team"),
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
			Function: openai.FunctionCall{Name: "list_teammates", Arguments: "{}"}}}},
		user("where is my answer?"))
	_, err := client("lead").CreateChatCompletion(context.Background(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || !strings.Contains(apiErr.Message, "c1") {
		t.Fatalf("got %#v", err)
	}
}

func TestUndeclaredToolIsNotCalled(t *testing.T) {
	tr := ask(t, "lead", false, conv(nil, sys("lead"), user("list team")))
	if len(tr.calls) != 0 || !strings.Contains(tr.content, "list_teammates is not available") {
		t.Fatalf("got %+v", tr)
	}
}

// TestLeadSaysEachReportOnceHoweverReportsArrive: over all the lead's
// answers to a prompt, each report is said once, in the same words, whether
// the teammates' reports come in one batch, in another order, or a combined
// report comes as two; only which answer says it depends on timing.
func TestLeadSaysEachReportOnceHoweverReportsArrive(t *testing.T) {
	req := conv(leadTools, sys("lead"), user("spawn alice as writer to write a poem; spawn bob as tester to check it; send alice: hi; list team"))
	for _, result := range []string{"spawned alice", "spawned bob", "sent", "NAME   ROLE    STATUS   TURNS  UNREAD  UPDATED\nalice  writer  working  0      1       13:13:41\nbob    tester  queued   0      0       13:13:41"} {
		tr := ask(t, "lead", false, req)
		if len(tr.calls) != 1 {
			t.Fatalf("want one call, got %+v", tr)
		}
		req = then(req, tr, result)
	}
	var first []openai.ChatCompletionMessage
	first = append(first, req.Messages...)
	aliceBoth := inbox("alice", "result", "alice (writer): ready — write a poem; received from lead: hi")
	bob := inbox("bob", "result", "bob (tester): ready — check it")

	// One batch, after the summary.
	var one []string
	tr := ask(t, "lead", false, req)
	one = append(one, tr.content)
	req = then(req, tr)
	req.Messages = append(req.Messages, user(aliceBoth+"\n"+bob))
	one = append(one, ask(t, "lead", false, req).content)

	// bob first, then alice's two parts as two reports; the list taken later.
	req.Messages = first
	req.Messages[len(req.Messages)-1].Content = "NAME   ROLE    STATUS  TURNS  UNREAD  UPDATED\nalice  writer  idle    2      0       13:13:45\nbob    tester  idle    1      0       13:13:44"
	req.Messages = append(req.Messages, user(bob))
	var three []string
	for _, next := range []string{inbox("alice", "result", "alice (writer): ready — write a poem"), inbox("alice", "result", "alice (writer): received from lead: hi"), ""} {
		tr := ask(t, "lead", false, req)
		three = append(three, tr.content)
		req = then(req, tr)
		if next != "" {
			req.Messages = append(req.Messages, user(next))
		}
	}
	if a, b := saidLines(one), saidLines(three); a != b {
		t.Fatalf("what the lead said depends on timing:\none batch:\n%s\n\nthree reports:\n%s", a, b)
	}
	all := strings.Join(one, "\n")
	for _, want := range []string{"alice  writer\nbob    tester", "- alice: done — received from lead: hi", "- bob: done — ready — check it"} {
		if !strings.Contains(all, want) {
			t.Errorf("the answers lack %q:\n%s", want, all)
		}
	}
	if strings.Count(all, "Here is what I did") != 1 {
		t.Errorf("the commands are summarised more than once:\n%s", all)
	}
}

// saidLines is the lines of answers, sorted, headings aside: what was said,
// whichever answer said it.
func saidLines(answers []string) string {
	var lines []string
	for _, a := range answers {
		for _, l := range strings.Split(a, "\n") {
			if l != "" && l != teamSaid {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
