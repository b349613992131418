package loop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

func TestSessionRestoreContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions", "alice.jsonl")
	in := &fakeInbox{}
	in.push(msg("m1", "lead", "hello"))
	m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "echo", `{"text":"a"}`}), final("first done")}}
	a := newAgent(t, AgentConfig{Model: m, Inbox: in, SessionPath: path}, echo("echo", false))
	_ = a.Say(t.Context(), "task")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("session file: %v %v", fi, err)
	}

	// A new process: same session, and the inbox re-delivers m1 (its commit was lost).
	in2 := &fakeInbox{}
	in2.push(msg("m1", "lead", "hello"), msg("m2", "lead", "next"))
	m2 := &fakeModel{t: t, steps: []step{final("second done")}}
	b := newAgent(t, AgentConfig{Model: m2, Inbox: in2, SessionPath: path}, echo("echo", false))
	if !reflect.DeepEqual(b.Messages(), a.Messages()) {
		t.Fatalf("restored:\n%s\nwant:\n%s", dump(b.Messages()), dump(a.Messages()))
	}
	if _, err := b.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := m2.requests()[0].Messages[1:]
	want := append(a.Messages(), openai.ChatCompletionMessage{Role: "user",
		Content: "<message from=\"lead\" type=\"message\" id=\"m2\">\nnext\n</message>"})
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("model saw:\n%s\nwant:\n%s", dump(sent), dump(want))
	}
	data, _ := os.ReadFile(path)
	if strings.Count(string(data), `id=\"m1\"`) != 1 || strings.Contains(string(data), "sk-") {
		t.Errorf("session file:\n%s", data)
	}
}

func TestSessionRestoreRepairsACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	lines := []openai.ChatCompletionMessage{
		{Role: "user", Content: "task"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "echo", Arguments: "{}"}},
			{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "echo", Arguments: "{}"}},
		}},
		{Role: "tool", ToolCallID: "c1", Content: "echo:"},
	}
	var data []byte
	for _, l := range lines {
		b, _ := json.Marshal(l)
		data = append(append(data, b...), '\n')
	}
	data = append(data, `{"role":"tool","tool_call_id":"c2","cont`...) // cut short by the crash
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{t: t, steps: []step{final("recovered")}}
	a := newAgent(t, AgentConfig{Model: m, SessionPath: path}, echo("echo", false))
	msgs := a.Messages()
	checkPairing(t, msgs)
	if len(msgs) != 4 || msgs[3].Content != interruptedResult {
		t.Fatalf("restored:\n%s", dump(msgs))
	}
	// The unanswered turn counts as news: the model is asked to go on.
	if cyc, err := a.RunCycle(context.Background()); err != nil || cyc.Final != "recovered" {
		t.Errorf("cycle %+v err %v", cyc, err)
	}
}

func TestReadInboxToolCommitsAfterRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	in := &fakeInbox{sessionPath: path, redeliver: true}
	var a *Agent
	readInbox := funcTool{name: "read_inbox", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		text, commit, err := a.ReadInbox(ctx)
		return tools.Result{Content: text, AfterRecord: commit}, err
	}}
	m := &fakeModel{t: t, steps: []step{
		func(req llm.Request) (llm.Response, error) {
			in.push(msg("m7", "bob", "status?")) // arrives after the turn began
			return calls(tc{"c1", "read_inbox", `{}`})(req)
		},
		final("answered"),
	}}
	a = newAgent(t, AgentConfig{Model: m, Inbox: in, SessionPath: path}, readInbox)
	_ = a.Say(t.Context(), "check your inbox")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if !strings.Contains(msgs[2].Content, `id="m7"`) || msgs[2].Role != "tool" {
		t.Fatalf("conversation:\n%s", dump(msgs))
	}
	// m7 is redelivered before turn 2 but is already in the conversation.
	if len(msgs) != 4 || len(in.commitErrs) != 0 {
		t.Errorf("conversation:\n%s\ncommitted early: %v", dump(msgs), in.commitErrs)
	}
	// A restored agent knows m7 from the tool answer's tag.
	b := newAgent(t, AgentConfig{Model: &fakeModel{t: t}, Inbox: in, SessionPath: path})
	if _, err := b.RunCycle(context.Background()); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("restored agent err = %v", err)
	}
}

func TestCompactionKeepsPairing(t *testing.T) {
	m := &fakeModel{t: t}
	a := newAgent(t, AgentConfig{Model: m}, echo("echo", true))
	_ = a.Say(t.Context(), "the task")
	var steps []step
	for i := range 12 {
		ids := []tc{{id: "p" + string(rune('a'+i)), name: "echo", args: `{}`}, {id: "q" + string(rune('a'+i)), name: "echo", args: `{}`}}
		steps = append(steps, calls(ids...))
	}
	overflowOnce := false
	steps = append(steps, func(req llm.Request) (llm.Response, error) {
		if !overflowOnce {
			overflowOnce = true
			return llm.Response{}, llm.ErrContextLength
		}
		return final("fits now")(req)
	})
	m.steps = steps
	ev := &eventLog{}
	a.onEvent = ev.add
	cyc, err := a.RunCycle(context.Background())
	if err != nil || cyc.Final != "fits now" {
		t.Fatalf("cycle %+v err %v", cyc, err)
	}
	reqs := m.requests()
	last := reqs[len(reqs)-1].Messages[1:]
	if len(last) >= len(reqs[len(reqs)-2].Messages[1:]) {
		t.Errorf("not shorter: %d messages", len(last))
	}
	if last[0].Content != "the task" || !strings.HasPrefix(last[1].Content, compactedNote) {
		t.Errorf("head:\n%s", dump(last))
	}
	if len(ev.kinds(EventCompacted)) != 1 {
		t.Error("no compacted event")
	}
}

func TestCompactShapes(t *testing.T) {
	user := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "user", Content: s}
	}
	asst := func(ids ...string) openai.ChatCompletionMessage {
		m := openai.ChatCompletionMessage{Role: "assistant", Content: "a"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id, Type: "function"})
		}
		return m
	}
	tool := func(id string) openai.ChatCompletionMessage { return toolMessage(id, "r") }
	tests := map[string][]openai.ChatCompletionMessage{
		"only tool turns": {user("t"), asst("1", "2"), tool("1"), tool("2"), asst("3", "4"), tool("3"), tool("4"),
			asst("5", "6"), tool("5"), tool("6"), asst("7", "8"), tool("7"), tool("8")},
		"user in the tail": {user("t"), asst("1"), tool("1"), asst(), user("u"), asst("2"), tool("2"), asst("3"), tool("3")},
		"no user first":    {asst("1"), tool("1"), asst("2"), tool("2"), asst("3"), tool("3"), user("u")},
	}
	for name, msgs := range tests {
		t.Run(name, func(t *testing.T) {
			c := &conversation{msgs: msgs}
			dropped := c.compact()
			if dropped == 0 || len(c.msgs) >= len(msgs) {
				t.Fatalf("dropped %d:\n%s", dropped, dump(c.msgs))
			}
			checkPairing(t, c.msgs)
			if msgs[0].Role == "user" && c.msgs[0].Content != "t" {
				t.Errorf("first user message lost:\n%s", dump(c.msgs))
			}
		})
	}
}

// A cycle cancelled mid-tool still records the calls' answers in a
// SessionLog that refuses a cancelled call: the conversation keeps them,
// so its log must too, and a restored agent reads the same conversation.
func TestACancelledCycleIsRecordedInItsSessionLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	started := make(chan struct{}, 1)
	block := funcTool{name: "block", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return tools.Errorf("stopped: %v", ctx.Err()), nil
	}}
	m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "block", `{}`}, tc{"c2", "echo", `{}`})}}
	a := newAgent(t, AgentConfig{Model: m, Session: FileSession(path)}, block, echo("echo", false))
	_ = a.Say(t.Context(), "go")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	if _, err := a.RunCycle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	b := newAgent(t, AgentConfig{Model: &fakeModel{t: t}, Session: FileSession(path)})
	if got := b.Messages(); len(got) != 4 || !reflect.DeepEqual(got, a.Messages()) {
		t.Fatalf("restored:\n%s\nwant:\n%s", dump(got), dump(a.Messages()))
	}
}
