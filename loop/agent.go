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
	name, system string
	model        llm.Model
	inbox        Inbox
	session      *session
	maxTurns     int
	onEvent      func(Event)
	onDelta      func(llm.Delta)
	recover      func(openai.ToolCall) (string, bool)
	instructions func() string
	onStop       func(context.Context, string, bool) string

	mu      sync.Mutex                     // guards the fields below
	cycling bool                           // a RunCycle is under way
	pending []openai.ChatCompletionMessage // said during a cycle, taken in at the next turn
	tools   *tools.Set
	extra   string                         // Instructions' text for this cycle, after system
	msgs    []openai.ChatCompletionMessage // the conversation, system prompt excluded
	seen    map[string]bool                // inbox message ids already in the conversation
	callIDs map[string]bool                // tool call ids already in the conversation
	usage   openai.Usage
	win     window // the model's context window, as known
}

// NewAgent builds an agent; an existing non-empty session file is restored,
// so the agent continues the conversation it had.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.Name == "" {
		return nil, errors.New("an agent needs a name")
	}
	if cfg.Model == nil {
		return nil, fmt.Errorf("agent %s has no model", cfg.Name)
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	a := &Agent{
		name: cfg.Name, system: cfg.System, model: cfg.Model, inbox: cfg.Inbox,
		maxTurns: cfg.MaxTurns, onEvent: cfg.OnEvent, onDelta: cfg.OnDelta, recover: cfg.Recover, instructions: cfg.Instructions, onStop: cfg.OnStop,
		tools: cfg.Tools, seen: map[string]bool{}, callIDs: map[string]bool{},
		win: window{size: cfg.ContextWindow, reserve: cfg.ReplyReserve},
	}
	if cfg.SessionPath != "" || cfg.Session != nil {
		a.session = &session{path: cfg.SessionPath, log: cfg.Session}
		r, err := a.session.load()
		if err != nil {
			return nil, fmt.Errorf("restore agent %s: %w", cfg.Name, err)
		}
		a.setConversation(r)
	}
	return a, nil
}

// setConversation makes msgs, read from the session file, the conversation.
func (a *Agent) setConversation(r *restored) {
	a.msgs = repairPairing(r.msgs, a.recover)
	a.seen, a.callIDs = r.seen, r.callIDs
	for _, m := range a.msgs { // answers repairPairing made
		markSeen(a.seen, m)
	}
}

// Reload swaps the conversation under an agent between cycles: with the
// session file let go, replace runs (it may rename session files), then the
// conversation is read again from the session file. During a cycle nothing
// runs and the error is ErrCycleRunning; a cycle or Say asked for meanwhile
// waits for the swap. The usage counted so far stays.
func (a *Agent) Reload(replace func() error) error {
	if a.session == nil {
		return fmt.Errorf("agent %s keeps no session to reload", a.name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cycling {
		return ErrCycleRunning
	}
	a.session.mu.Lock()
	defer a.session.mu.Unlock()
	if a.session.f != nil {
		_ = a.session.f.Close() // every write so far has gone through
		a.session.f = nil
	}
	rerr := replace()
	r, err := a.session.load()
	if err != nil {
		// The file may be half moved: the conversation in memory stays,
		// and the next write goes to whatever the path holds now.
		return errors.Join(rerr, fmt.Errorf("reload agent %s: %w", a.name, err))
	}
	a.setConversation(r)
	a.pending = nil
	return rerr
}

// Name is the agent's name.
func (a *Agent) Name() string { return a.name }

// SetTools sets the tools; they are built after the agent because read_inbox needs it.
func (a *Agent) SetTools(s *tools.Set) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools = s
}

// Say appends a plain user message (the person, or a spawn prompt). During a
// cycle it waits for the next turn boundary, so it never splits a tool call
// from its answers; if the cycle ends first, the next cycle answers it.
func (a *Agent) Say(content string) error {
	m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: content}
	a.mu.Lock()
	if a.cycling {
		a.pending = append(a.pending, m)
		a.mu.Unlock()
		return nil
	}
	a.msgs = append(a.msgs, m)
	a.mu.Unlock()
	return a.session.append(m)
}

// takePending moves what was said during the cycle into the conversation.
func (a *Agent) takePending() error {
	a.mu.Lock()
	msgs := a.pending
	a.pending = nil
	a.mu.Unlock()
	return a.record(msgs...)
}

// startCycle and endCycle bracket RunCycle; endCycle keeps late Says.
func (a *Agent) startCycle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cycling {
		return false
	}
	a.cycling = true
	return true
}

func (a *Agent) endCycle() error {
	a.mu.Lock()
	msgs := a.pending
	a.pending = nil
	a.msgs = append(a.msgs, msgs...)
	a.cycling = false
	a.mu.Unlock()
	return a.session.append(msgs...)
}

// Close releases the agent's open session file; a later write reopens it.
func (a *Agent) Close() error { return a.session.close() }

// Usage is the token usage of all model calls so far.
func (a *Agent) Usage() openai.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// Messages is a copy of the conversation, without the system prompt.
func (a *Agent) Messages() []openai.ChatCompletionMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]openai.ChatCompletionMessage(nil), a.msgs...)
}

// record appends to the conversation and the session file. The conversation
// keeps the messages even if the file write fails, so pairing stays valid.
func (a *Agent) record(msgs ...openai.ChatCompletionMessage) error {
	a.mu.Lock()
	a.msgs = append(a.msgs, msgs...)
	a.mu.Unlock()
	return a.session.append(msgs...)
}

// claimCallIDs gives msg's tool calls ids unused in this conversation.
func (a *Agent) claimCallIDs(msg *openai.ChatCompletionMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	uniqueCallIDs(a.callIDs, msg)
}

func (a *Agent) currentTools() *tools.Set {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tools
}

func (a *Agent) addUsage(u openai.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage = sumUsage(a.usage, u)
}

func sumUsage(x, y openai.Usage) openai.Usage {
	x.PromptTokens += y.PromptTokens
	x.CompletionTokens += y.CompletionTokens
	x.TotalTokens += y.TotalTokens
	return x
}
