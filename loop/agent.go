package loop

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// ErrTurnLimit ends a cycle that used all its turns without a final reply.
var ErrTurnLimit = errors.New("the agent reached its turn limit")

// ErrNothingToDo means a cycle found nothing new to answer, so the model was not called.
var ErrNothingToDo = errors.New("nothing new to answer")

// ErrCycleRunning means RunCycle was called while another cycle of the same agent runs.
var ErrCycleRunning = errors.New("a cycle of this agent is already running")

// DefaultMaxTurns bounds one cycle.
const DefaultMaxTurns = 50

// AgentConfig describes one agent.
type AgentConfig struct {
	Name, System string
	// Instructions, when not nil, is read at the start of every cycle and
	// added to System for that cycle's requests (the AGENTS.md files, read
	// again so that an edit takes effect without a restart).
	Instructions func() string
	Model        llm.Model
	Tools        *tools.Set
	Inbox        Inbox // nil: no inbox
	// SessionPath is sessions/NAME.jsonl; every conversation message is
	// appended as one JSON line. "" records nothing.
	SessionPath string
	// Session, when not nil, keeps the conversation instead of the file at
	// SessionPath: the same lines in another store.
	Session  SessionLog
	MaxTurns int             // per cycle, default 50
	OnEvent  func(Event)     // called synchronously from the cycle; must not block long
	OnDelta  func(llm.Delta) // streaming text
	// Recover answers, on restore, a tool call that a crash left without
	// an answer, when the call's effect can be checked (a message that
	// did reach its inbox); ok false leaves it answered as interrupted.
	Recover func(tc openai.ToolCall) (answer string, ok bool)
	// ContextWindow is the model's context window in tokens, where it is
	// configured (0: learned from the server's first refusal); ReplyReserve
	// the tokens a compacted conversation leaves for the reply (0: a
	// quarter of the window).
	ContextWindow, ReplyReserve int
	// OnStop, when set, is asked when the model ends its turn without a
	// tool call: a reason not "" (a Stop hook's) is given to the model as
	// a message and the cycle goes on, at most MaxStopContinues times a
	// cycle. again says the cycle goes on because of an earlier reason.
	OnStop func(ctx context.Context, final string, again bool) (reason string)
}

// MaxStopContinues bounds how often OnStop may keep one cycle going.
const MaxStopContinues = 3

// Cycle is the outcome of one work cycle.
type Cycle struct {
	Final string
	Turns int
	Usage openai.Usage
}

// Agent is one ReAct loop. RunCycle is not reentrant (a second concurrent
// call gets ErrCycleRunning); Say, Messages and Usage may be called from any goroutine.
type Agent struct {
	name         string
	model        llm.Model
	maxTurns     int
	onEvent      func(Event)
	onDelta      func(llm.Delta)
	instructions func() string
	onStop       func(context.Context, string, bool) string

	conv conversation // the conversation, its window, its session
	in   intake       // the inbox, taken into conv
}

// NewAgent builds an agent; an existing non-empty session file is restored
// (read within ctx), so the agent continues the conversation it had.
func NewAgent(ctx context.Context, cfg AgentConfig) (*Agent, error) {
	if cfg.Name == "" {
		return nil, errors.New("an agent needs a name")
	}
	if cfg.Model == nil {
		return nil, fmt.Errorf("agent %s has no model", cfg.Name)
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	seen := &seenIDs{ids: map[string]bool{}}
	a := &Agent{
		name: cfg.Name, model: cfg.Model,
		maxTurns: cfg.MaxTurns, onEvent: cfg.OnEvent, onDelta: cfg.OnDelta, instructions: cfg.Instructions, onStop: cfg.OnStop,
		conv: conversation{system: cfg.System, recover: cfg.Recover, seen: seen,
			tools: cfg.Tools, callIDs: map[string]bool{}, win: window{size: cfg.ContextWindow, reserve: cfg.ReplyReserve}},
	}
	a.in = intake{name: cfg.Name, inbox: cfg.Inbox, seen: seen, emit: a.emit, record: a.conv.record}
	if cfg.SessionPath != "" || cfg.Session != nil {
		a.conv.session = &session{path: cfg.SessionPath, log: cfg.Session}
		r, err := a.conv.session.load(ctx)
		if err != nil {
			return nil, fmt.Errorf("restore agent %s: %w", cfg.Name, err)
		}
		a.conv.restore(r)
	}
	return a, nil
}

// Reload swaps the conversation under an agent between cycles: with the
// session file let go, replace runs (it may rename session files), then the
// conversation is read again from the session file. During a cycle nothing
// runs and the error is ErrCycleRunning; a cycle or Say asked for meanwhile
// waits for the swap. The usage counted so far stays.
func (a *Agent) Reload(ctx context.Context, replace func() error) error {
	if a.conv.session == nil {
		return fmt.Errorf("agent %s keeps no session to reload", a.name)
	}
	return a.conv.reload(ctx, a.name, replace)
}

// Name is the agent's name.
func (a *Agent) Name() string { return a.name }

// SetTools sets the tools; they are built after the agent because read_inbox needs it.
func (a *Agent) SetTools(s *tools.Set) { a.conv.setTools(s) }

// Say appends a plain user message (the person, or a spawn prompt). During a
// cycle it waits for the next turn boundary, so it never splits a tool call
// from its answers; if the cycle ends first, the next cycle answers it.
func (a *Agent) Say(ctx context.Context, content string) error {
	return a.conv.say(ctx, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: content})
}

// Close releases the agent's open session file; a later write reopens it.
func (a *Agent) Close() error { return a.conv.session.close() }

// Usage is the token usage of all model calls so far.
func (a *Agent) Usage() openai.Usage { return a.conv.totalUsage() }

// Messages is a copy of the conversation, without the system prompt.
func (a *Agent) Messages() []openai.ChatCompletionMessage { return a.conv.messages() }

// HasNews reports whether the conversation ends in something the model has
// not answered yet (e.g. a resumed agent that was stopped mid-cycle).
func (a *Agent) HasNews() bool { return a.conv.hasNews() }

func sumUsage(x, y openai.Usage) openai.Usage {
	x.PromptTokens += y.PromptTokens
	x.CompletionTokens += y.CompletionTokens
	x.TotalTokens += y.TotalTokens
	return x
}
