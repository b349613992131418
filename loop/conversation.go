package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// conversation is an agent's conversation and what goes with it: the
// messages said during a cycle, the tools and instructions every request
// carries, the usage so far, the model's window as known, and the session
// that records every message. mu guards the fields after it; the session
// and seen have their own locks.
type conversation struct {
	system  string
	recover func(openai.ToolCall) (string, bool)
	session *session // nil: nothing recorded
	seen    *seenIDs // inbox message ids already in the conversation

	mu      sync.Mutex
	cycling bool                           // a RunCycle is under way
	pending []openai.ChatCompletionMessage // said during a cycle, taken in at the next turn
	tools   *tools.Set
	extra   string                         // Instructions' text for this cycle, after system
	msgs    []openai.ChatCompletionMessage // the conversation, system prompt excluded
	callIDs map[string]bool                // tool call ids already in the conversation
	usage   openai.Usage
	win     window // the model's context window, as known
}

// restore makes r, read from the session, the conversation. The caller
// holds c.mu or has not shared c yet.
func (c *conversation) restore(r *restored) {
	c.msgs = repairPairing(r.msgs, c.recover)
	c.callIDs = r.callIDs
	for _, m := range c.msgs { // answers repairPairing made
		markSeen(r.seen, m)
	}
	c.seen.reset(r.seen)
}

// reload swaps the conversation for what the session holds once replace
// has run, with the session file let go meanwhile (see Agent.Reload).
func (c *conversation) reload(ctx context.Context, name string, replace func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cycling {
		return ErrCycleRunning
	}
	c.session.mu.Lock()
	defer c.session.mu.Unlock()
	if c.session.f != nil {
		_ = c.session.f.Close() // every write so far has gone through
		c.session.f = nil
	}
	rerr := replace()
	r, err := c.session.load(ctx)
	if err != nil {
		// The file may be half moved: the conversation in memory stays,
		// and the next write goes to whatever the path holds now.
		return errors.Join(rerr, fmt.Errorf("reload agent %s: %w", name, err))
	}
	c.restore(r)
	c.pending = nil
	return rerr
}

func (c *conversation) setTools(s *tools.Set) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = s
}

func (c *conversation) currentTools() *tools.Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// setExtra takes the cycle's instructions.
func (c *conversation) setExtra(text string) {
	c.mu.Lock()
	c.extra = text
	c.mu.Unlock()
}

// say appends m, or, during a cycle, keeps it for the next turn boundary.
func (c *conversation) say(ctx context.Context, m openai.ChatCompletionMessage) error {
	c.mu.Lock()
	if c.cycling {
		c.pending = append(c.pending, m)
		c.mu.Unlock()
		return nil
	}
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	return c.session.append(ctx, m)
}

// takePending moves what was said during the cycle into the conversation.
func (c *conversation) takePending(ctx context.Context) error {
	c.mu.Lock()
	msgs := c.pending
	c.pending = nil
	c.mu.Unlock()
	return c.record(ctx, msgs...)
}

// start and end bracket a cycle; end keeps late Says.
func (c *conversation) start() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cycling {
		return false
	}
	c.cycling = true
	return true
}

func (c *conversation) end(ctx context.Context) error {
	c.mu.Lock()
	msgs := c.pending
	c.pending = nil
	c.msgs = append(c.msgs, msgs...)
	c.cycling = false
	c.mu.Unlock()
	return c.session.append(ctx, msgs...)
}

// record appends to the conversation and the session file. The conversation
// keeps the messages even if the file write fails, so pairing stays valid.
func (c *conversation) record(ctx context.Context, msgs ...openai.ChatCompletionMessage) error {
	c.mu.Lock()
	c.msgs = append(c.msgs, msgs...)
	c.mu.Unlock()
	return c.session.append(ctx, msgs...)
}

// messages is a copy of the conversation, without the system prompt.
func (c *conversation) messages() []openai.ChatCompletionMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]openai.ChatCompletionMessage(nil), c.msgs...)
}

// hasNews: the conversation ends in something the model has not answered yet.
func (c *conversation) hasNews() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.msgs) == 0 {
		return false
	}
	last := c.msgs[len(c.msgs)-1]
	return last.Role != openai.ChatMessageRoleAssistant || len(last.ToolCalls) > 0
}

// claimCallIDs gives msg's tool calls ids unused in this conversation.
func (c *conversation) claimCallIDs(msg *openai.ChatCompletionMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	uniqueCallIDs(c.callIDs, msg)
}

func (c *conversation) totalUsage() openai.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

func (c *conversation) addUsage(u openai.Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.usage = sumUsage(c.usage, u)
}

// request is the next turn's request for agent name.
func (c *conversation) request(name string, onDelta func(llm.Delta)) llm.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	msgs := make([]openai.ChatCompletionMessage, 0, len(c.msgs)+1)
	if sys := c.system + c.extra; sys != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: sys})
	}
	msgs = append(msgs, c.msgs...)
	req := llm.Request{Agent: name, Messages: msgs, OnDelta: onDelta}
	if c.tools != nil {
		req.Tools = c.tools.Definitions()
	}
	return req
}

func (c *conversation) window() window {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.win
}

// measure takes the prompt tokens the server counted for req.
func (c *conversation) measure(prompt int, req llm.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.win.size > 0 { // only a known window needs the estimates
		c.win.measure(prompt, estimateRequest(req))
	}
}

func (c *conversation) learnWindow(ce *llm.ContextError, req llm.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.win.learn(ce, estimateRequest(req))
}
