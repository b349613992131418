package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// checkPairing fails the test unless every assistant tool call is answered
// right after it, in order, and no tool message stands alone.
func checkPairing(t *testing.T, msgs []openai.ChatCompletionMessage) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == openai.ChatMessageRoleTool {
			t.Fatalf("message %d: tool answer %q without its call", i, m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			i++
			if i >= len(msgs) || msgs[i].Role != openai.ChatMessageRoleTool || msgs[i].ToolCallID != tc.ID {
				t.Fatalf("message %d: call %s not answered in order; conversation:\n%s", i, tc.ID, dump(msgs))
			}
			if msgs[i].Content == "" {
				t.Fatalf("message %d: empty tool answer", i)
			}
		}
	}
}

func dump(msgs []openai.ChatCompletionMessage) string {
	var b strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&b, "%d %s %q calls=%d id=%s\n", i, m.Role, m.Content, len(m.ToolCalls), m.ToolCallID)
	}
	return b.String()
}

// step is one scripted model answer.
type step func(req llm.Request) (llm.Response, error)

// fakeModel answers from a script and checks every request's pairing.
type fakeModel struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	reqs  []llm.Request
}

func (f *fakeModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	var s step
	if n < len(f.steps) {
		s = f.steps[n]
	} else if len(f.steps) > 0 {
		s = f.steps[len(f.steps)-1]
	}
	f.mu.Unlock()
	checkPairing(f.t, req.Messages[1:]) // [0] is the system prompt
	if req.Messages[0].Role != openai.ChatMessageRoleSystem || req.Agent == "" {
		f.t.Errorf("request lacks system prompt or agent: %+v", req.Messages[0])
	}
	if s == nil {
		f.t.Fatal("model called with no script")
	}
	return s(req)
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

func final(text string) step {
	return func(llm.Request) (llm.Response, error) {
		return llm.Response{Message: openai.ChatCompletionMessage{Role: "assistant", Content: text},
			Usage: openai.Usage{PromptTokens: 10, CompletionTokens: 1, TotalTokens: 11}}, nil
	}
}

type tc struct{ id, name, args string }

func calls(cs ...tc) step {
	return func(llm.Request) (llm.Response, error) {
		msg := openai.ChatCompletionMessage{Role: "assistant"}
		for _, c := range cs {
			msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: c.id, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.name, Arguments: c.args}})
		}
		return llm.Response{Message: msg, Usage: openai.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}}, nil
	}
}

func fail(err error) step {
	return func(llm.Request) (llm.Response, error) { return llm.Response{}, err }
}

// funcTool is a test tool whose Run is a closure.
type funcTool struct {
	name     string
	parallel bool
	run      func(ctx context.Context, args json.RawMessage) (tools.Result, error)
}

type textArgs struct {
	Text string `json:"text" description:"what to echo"`
}

func (f funcTool) Name() string        { return f.name }
func (f funcTool) Description() string { return "test tool " + f.name }
func (f funcTool) Params() any         { return textArgs{} }
func (f funcTool) Parallel() bool      { return f.parallel }
func (f funcTool) Run(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	return f.run(ctx, args)
}

// echo returns its text argument; arguments that do not parse are a tool error.
func echo(name string, parallel bool) funcTool {
	return funcTool{name: name, parallel: parallel, run: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		var a textArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return tools.Errorf("arguments do not parse: %v", err), nil
		}
		return tools.Text("echo:" + a.Text), nil
	}}
}

// fakeInbox hands out scripted batches and logs every call; it can check,
// at commit time, that the session file already holds the messages.
type fakeInbox struct {
	mu          sync.Mutex
	batches     []inbox.Batch // one per ReadUnread; empty when exhausted
	redeliver   bool          // Commit does not advance: the same batch comes again
	log         []string
	sessionPath string
	commitErrs  []string // what a commit found missing from the session file
	held        int      // the next commits that fail with inbox.ErrHeld (position unmoved)
}

func (f *fakeInbox) ReadUnread(_ context.Context, name string) (inbox.Batch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "read")
	if len(f.batches) == 0 {
		return inbox.Batch{}, nil
	}
	return f.batches[0], nil
}

func (f *fakeInbox) Commit(_ context.Context, name string, b inbox.Batch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "commit")
	if f.held > 0 {
		f.held--
		return fmt.Errorf("commit %s: %w", name, inbox.ErrHeld)
	}
	if f.sessionPath != "" {
		data, _ := os.ReadFile(f.sessionPath)
		for _, m := range b.Messages {
			if !strings.Contains(string(data), m.ID) {
				f.commitErrs = append(f.commitErrs, m.ID)
			}
		}
	}
	if !f.redeliver && len(f.batches) > 0 {
		f.batches = f.batches[1:]
	}
	return nil
}

func (f *fakeInbox) push(msgs ...inbox.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, inbox.Batch{Messages: msgs})
}

func msg(id, from, content string) inbox.Message {
	return inbox.Message{ID: id, Type: inbox.TypeMessage, From: from, To: "alice", Content: content}
}

type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) kinds(kind EventKind) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func newAgent(t *testing.T, cfg AgentConfig, ts ...tools.Tool) *Agent {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "alice"
	}
	if cfg.System == "" {
		cfg.System = "you are alice"
	}
	a, err := NewAgent(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.SetTools(tools.NewSet(ts...))
	return a
}

func inboxBad() inbox.BadLine {
	return inbox.BadLine{Offset: 42, Line: "{broken", Reason: "not json"}
}
