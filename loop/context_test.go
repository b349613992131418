package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// windowModel is a server with a context window: it counts a token per
// three bytes (not the loop's four, so the loop must measure), refuses a
// request over the window as llama.cpp does, and stops a reply at the
// window's end with finish_reason "length".
type windowModel struct {
	t      *testing.T
	size   int // the window
	reply  int // tokens a reply takes
	script func(n int, req llm.Request) llm.Response
	reqs   []int // prompt tokens of each request
	n      int
}

func (w *windowModel) tokens(req llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + 10
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments) + 10
		}
	}
	return n / 3
}

func (w *windowModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	checkPairing(w.t, req.Messages[1:])
	p := w.tokens(req)
	w.reqs = append(w.reqs, p)
	if p > w.size {
		return llm.Response{}, &llm.ContextError{Window: w.size, Prompt: p}
	}
	if p+w.reply > w.size {
		return llm.Response{Message: openai.ChatCompletionMessage{Role: "assistant", Content: "cut"},
			FinishReason: "length", Usage: openai.Usage{PromptTokens: p, CompletionTokens: w.size - p}}, nil
	}
	resp := w.script(w.n, req)
	w.n++
	resp.Usage = openai.Usage{PromptTokens: p, CompletionTokens: w.reply}
	return resp, nil
}

func bigTool(name string) funcTool {
	return funcTool{name: name, run: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		return tools.Result{Content: name + ": " + strings.Repeat("output ", 300)}, nil
	}}
}

// The conversation outgrows the window: the refusal compacts it to leave
// the reply room (not a few tokens short of the window), the lead's spawn
// stays in the summary, and the turn goes on to a whole reply.
func TestCompactionLeavesRoomForTheReplyAndKeepsTheSpawns(t *testing.T) {
	w := &windowModel{t: t, size: 3300, reply: 400}
	w.script = func(n int, req llm.Request) llm.Response {
		msg := openai.ChatCompletionMessage{Role: "assistant"}
		switch {
		case n == 0:
			msg.ToolCalls = []openai.ToolCall{{ID: "s1", Type: "function", Function: openai.FunctionCall{Name: "spawn_teammate", Arguments: `{"name":"alice","role":"programmer"}`}}}
		case n < 12:
			msg.ToolCalls = []openai.ToolCall{{ID: "r" + string(rune('a'+n)), Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{}`}}}
		default:
			msg.Content = "all read"
		}
		return llm.Response{Message: msg}
	}
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: w, OnEvent: ev.add}, bigTool("spawn_teammate"), bigTool("read_file"))
	if err := a.Say(t.Context(), "read everything"); err != nil {
		t.Fatal(err)
	}
	cyc, err := a.RunCycle(context.Background())
	if err != nil {
		t.Fatalf("cycle: %v (requests %v)", err, w.reqs)
	}
	if cyc.Final != "all read" {
		t.Fatalf("final %q", cyc.Final)
	}
	if len(ev.kinds(EventCompacted)) == 0 {
		t.Fatal("never compacted")
	}
	// Every request after the first refusal leaves the reply its room.
	refused := false
	for _, p := range w.reqs {
		if refused && p+w.reply > w.size {
			t.Errorf("a request of %d tokens after compaction leaves %d for the reply (requests %v)", p, w.size-p, w.reqs)
		}
		refused = refused || p > w.size
	}
	msgs := a.Messages()
	var summary string
	for _, m := range msgs {
		if strings.HasPrefix(m.Content, compactedNote) {
			summary = m.Content
		}
	}
	if !strings.Contains(summary, "spawn_teammate") || !strings.Contains(summary, "alice") {
		t.Errorf("the summary lost the spawn:\n%s", summary)
	}
}

// A reply stopped at the end of a known window is not an output limit: the
// conversation is compacted and the turn asked again.
func TestALengthFinishOnAFullWindowCompactsInsteadOfBlamingTheOutputLimit(t *testing.T) {
	w := &windowModel{t: t, size: 2000, reply: 600}
	w.script = func(n int, req llm.Request) llm.Response {
		if n < 4 {
			return llm.Response{Message: openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
				{ID: "c" + string(rune('a'+n)), Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{}`}}}}}
		}
		return llm.Response{Message: openai.ChatCompletionMessage{Role: "assistant", Content: "done"}}
	}
	a := newAgent(t, AgentConfig{Model: w, ContextWindow: 2000, ReplyReserve: 700}, bigTool("read_file"))
	_ = a.Say(t.Context(), "go")
	cyc, err := a.RunCycle(context.Background())
	if errors.Is(err, ErrOutputLimit) {
		t.Fatalf("blamed the output limit: %v", err)
	}
	if err != nil || cyc.Final != "done" {
		t.Fatalf("cycle %+v, err %v (requests %v)", cyc, err, w.reqs)
	}
}

// A conversation whose task alone is over the window ends with a sentence
// that says so, not in a loop of refusals.
func TestATaskLongerThanTheWindowEndsWithASentence(t *testing.T) {
	w := &windowModel{t: t, size: 500, reply: 100, script: func(int, llm.Request) llm.Response {
		return llm.Response{Message: openai.ChatCompletionMessage{Role: "assistant", Content: "x"}}
	}}
	a := newAgent(t, AgentConfig{Model: w})
	_ = a.Say(t.Context(), strings.Repeat("a very long task ", 400))
	_, err := a.RunCycle(context.Background())
	if err == nil {
		// Cut to fit: the task's text was shortened and the model answered.
		if len(w.reqs) > 4 {
			t.Errorf("%d requests", len(w.reqs))
		}
		return
	}
	if !errors.Is(err, ErrContextFull) && !errors.Is(err, llm.ErrContextLength) {
		t.Errorf("err %v", err)
	}
	if len(w.reqs) > 3 {
		t.Errorf("%d requests for one turn", len(w.reqs))
	}
}
