// Package handoff hands a task, with the sender's context, from one agent
// of a team to another, as a protocol request in steps.
//
//   - The sender's side is one function (run): the request, the receiver
//     runtime's answer (accept, or reject with why), the context built from
//     the sender's conversation, its acknowledgement, then the board task
//     changes owner. Each step has its own deadline.
//   - The receiver's runtime answers as each message is delivered, with no
//     model involved; for a teammate on another worker it is played in the
//     sender's process from the registry (remoteVerdict).
//   - A handoff that fails leaves the task with the sender, and both sides
//     are told why; each side's state is kept in its registry entry.
package handoff

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/request"
	"github.com/agentteam/agentteam/tools"
)

// Handoff message types; each one's correlation_id is the handoff's request id.
const (
	TypeHandoffRequest  inbox.MessageType = "handoff_request"
	TypeHandoffAccept   inbox.MessageType = "handoff_accept"
	TypeHandoffReject   inbox.MessageType = "handoff_reject"
	TypeContextTransfer inbox.MessageType = "context_transfer"
	TypeHandoffComplete inbox.MessageType = "handoff_complete"
	TypeHandoffFailed   inbox.MessageType = "handoff_failed"
)

// DefaultTimeout bounds each step of a handoff.
const DefaultTimeout = 60 * time.Second

// MaxStates is how many handoffs a registry entry keeps, newest last.
const MaxStates = 5

// Payload is the payload of every handoff message; context_transfer
// fills the context fields.
type Payload struct {
	RequestID string `json:"request_id"`
	Task      string `json:"task"`
	TaskID    string `json:"task_id,omitempty"`
	Role      string `json:"role,omitempty"` // the role the task asks for
	Reason    string `json:"reason,omitempty"`
	By        string `json:"by,omitempty"` // "runtime" when a runtime answered

	Description  string   `json:"description,omitempty"`
	Done         []string `json:"done,omitempty"`
	Decisions    []string `json:"decisions,omitempty"`
	FilesTouched []string `json:"files_touched,omitempty"`
	Summary      string   `json:"summary,omitempty"`
}

// What did not happen when a waiting step's deadline passed.
const (
	missedAnswer = "no answer to the handoff request within %s"
	missedAck    = "no acknowledgement of the context within %s"
)

// handoff is one handoff this process runs; both ends are its agents.
type Handoff struct {
	id, from, to string
	task         string // the board id, or the text the sender gave
	taskID       string // the board id, or ""
	subject      string // what the task is, in a line
	description  string
	role         string // the role the board task asks for, or ""
	reason       string
	summary      string
	// verdict is the receiver runtime's answer, judged as the request
	// arrives: "" accepts, otherwise the reason to reject.
	verdict string

	// answers brings the sender the receiver runtime's answer to the
	// step's message: handoff_accept, handoff_reject or handoff_complete.
	answers  chan answer
	accepted atomic.Bool // the receiver's runtime accepted: it must hear of a failure
	// waiting is closed once the sender waits for an answer that did not
	// come with its message's delivery: its tool call stops waiting too.
	waiting     chan struct{}
	waitingOnce sync.Once
}

// answer is the receiver runtime's answer, or, err set, the
// failure to deliver it.
type answer struct {
	typ inbox.MessageType
	err error
}

// Deps are what the handoffs need of their team.
type Deps struct {
	Requests *protocol.Requests
	Events   event.Sink
	Registry Registry
	Board    Board
	// Changed logs a change of a board task, as the board tools do.
	Changed func(agent string, c event.TaskChanged, task board.Task)
	Agents  Agents
	// Timeout bounds each step (0: DefaultTimeout).
	Timeout time.Duration
	// Failure is the event payload of a step that err ended.
	Failure func(class event.ErrorClass, prefix string, err error) event.Failure
	// Go runs fn on a goroutine the team waits for, with a context that
	// ends when the team stops.
	Go func(fn func(ctx context.Context))
	// Notify tells whoever waits for the team to settle to look again.
	Notify func()
	// Stopped reports whether the team is stopping.
	Stopped func() bool
}

// Registry is the registry as the handoffs record each side's state.
type Registry interface {
	Change(ctx context.Context, fn func(*registry.Config) error) error
}

// Board is the task board as a handoff reads and hands over a task.
type Board interface {
	Read(ctx context.Context) (board.File, error)
	HandOver(ctx context.Context, id, from, to string) (board.Task, error)
}

// Agents are the team's agents as a handoff needs them.
type Agents interface {
	// Receiver is the teammate name as a handoff may go to it, or why
	// there is none.
	Receiver(ctx context.Context, name string) (Receiver, error)
	// Conversation is agent name's conversation, if this process runs it.
	Conversation(name string) ([]openai.ChatCompletionMessage, bool)
}

// Receiver is a teammate a handoff may go to, as its team knows it.
type Receiver struct {
	// Here: this process runs it; else a worker does (or will), and the
	// rest is its registry entry's.
	Here        bool
	Status      registry.Status
	Role        string
	Ended       bool
	Worker      string
	WorkerAlive bool // its worker's heartbeat lives
}

// Service runs the handoffs of a team: the sender's side is one function
// (run), each receiver's runtime answers the messages delivered to its agent.
type Service struct {
	d Deps

	mu sync.Mutex
	// tasks are the board tasks being handed over, each with its handoff.
	tasks map[string]*Handoff
	// stall, set only by tests, drops the runtime's reaction to a message
	// type: a step that never answers.
	stall func(typ inbox.MessageType, h *Handoff) bool
}

// New is the handoffs of the team d describes.
func New(d Deps) *Service { return &Service{d: d, tasks: map[string]*Handoff{}} }

// SetStall, for tests, drops the runtime's reaction to the messages for
// which stall holds: a step that never answers.
func (hs *Service) SetStall(stall func(typ inbox.MessageType, h *Handoff) bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.stall = stall
}

func (hs *Service) stalled(typ inbox.MessageType, h *Handoff) bool {
	hs.mu.Lock()
	stall := hs.stall
	hs.mu.Unlock()
	return stall != nil && stall(typ, h)
}

// claim takes h's board task for the time of the handoff: one handoff of a task at a time.
func (hs *Service) claim(h *Handoff) error {
	if h.taskID == "" {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if o, busy := hs.tasks[h.taskID]; busy {
		return fmt.Errorf("%s is already being handed to %s (request %s): wait for the outcome", h.taskID, o.to, o.id)
	}
	hs.tasks[h.taskID] = h
	return nil
}

func (hs *Service) release(h *Handoff) {
	if h.taskID == "" {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.tasks, h.taskID)
}

func (hs *Service) timeout() time.Duration {
	if hs.d.Timeout > 0 {
		return hs.d.Timeout
	}
	return DefaultTimeout
}

var taskIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^t[0-9]+$`) })

// Start checks a handoff and runs it on a goroutine of the team. It
// returns the outcome, or, once a step waits for an answer that did not
// come at once, that the handoff is under way (its outcome then arrives as
// a message).
func (hs *Service) Start(ctx context.Context, from string, spec tools.HandoffSpec) (string, error) {
	h, err := hs.prepare(ctx, from, spec)
	if err != nil {
		return "", err
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	hs.d.Go(func(ctx context.Context) {
		out, err := hs.run(ctx, h)
		done <- result{out, err}
	})
	select {
	case r := <-done:
		return r.out, r.err
	case <-h.waiting:
		return fmt.Sprintf("The handoff of %s to %s (request %s) is under way; the outcome arrives as a handoff_complete, handoff_reject or handoff_failed message within %s per step. Until then the task is yours.",
			h.label(), h.to, h.id, hs.timeout()), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// run is the sender's side of a handoff, from its request to its outcome.
// Each step sends its message and then waits for the receiver runtime's
// answer, the step's deadline or the end of ctx (the team's); a handoff
// that fails leaves the task with the sender and tells both sides why.
// It returns what the sender's tool call reports.
func (hs *Service) run(ctx context.Context, h *Handoff) (string, error) {
	if err := hs.claim(h); err != nil {
		return "", err
	}
	defer hs.release(h)
	h.verdict = hs.verdict(ctx, h) // judged as the request arrives, before it can wake the receiver
	if _, err := hs.d.Requests.Open(h.ref(), h.subject, hs.timeout(), nil); err != nil {
		return "", err
	}

	hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffAwaitingAccept, "")
	answer, err := hs.exchange(ctx, h, h.from, h.to, TypeHandoffRequest, handoffRequestText(h), h.payload())
	var undelivered *undeliveredError
	switch {
	case errors.As(err, &undelivered) && undelivered.typ == TypeHandoffRequest:
		_, _ = hs.fail(ctx, h, event.OutcomeFailed, "the request could not be delivered: "+undelivered.err.Error())
		return "", undelivered.err
	case err != nil:
		return hs.failed(ctx, h, err, missedAnswer)
	case answer == TypeHandoffReject:
		if !hs.close(h, event.OutcomeRejected) {
			return "", errTeamStopping
		}
		hs.d.Requests.Answered(h.from, h.ref(), event.ByRuntime, event.OutcomeRejected, h.verdict)
		hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffFailed, "rejected by "+h.to+"'s runtime: "+h.verdict)
		return handoffRejectedText(h), nil
	}

	// Accepted: the context is built from the tool call's words and the sender's conversation.
	hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffContextPreparing, "")
	p := h.payload()
	p.Description, p.Summary = h.description, h.summary
	if msgs, ok := hs.d.Agents.Conversation(h.from); ok {
		p.Done, p.Decisions, p.FilesTouched = workRecord(msgs)
	}
	hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffAwaitingAck, "")
	if _, err := hs.exchange(ctx, h, h.from, h.to, TypeContextTransfer, contextText(h, p), p); err != nil {
		return hs.failed(ctx, h, err, missedAck)
	}

	// Acknowledged: only now does the task change owner, and only if the sender still owns it.
	if !hs.close(h, event.OutcomeCompleted) {
		return "", errTeamStopping
	}
	if h.taskID != "" {
		task, err := hs.d.Board.HandOver(ctx, h.taskID, h.from, h.to)
		if err != nil {
			return hs.failedAfter(ctx, h, true, event.OutcomeFailed, "the board did not change owner: "+err.Error()), nil
		}
		hs.d.Changed(h.from, event.TaskChanged{Change: event.TaskChangeHandedOver, To: h.to}, task)
	}
	hs.d.Requests.Answered(h.from, h.ref(), event.ByRuntime, event.OutcomeCompleted, "")
	hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffCompleted, "")
	hs.setSide(ctx, h.to, h, registry.HandoffReceiver, registry.HandoffCompleted, "")
	owns := "it"
	if h.taskID != "" {
		owns = h.taskID + " on the board"
	}
	return fmt.Sprintf("Handed %s to %s (request %s): it accepted, received your context and acknowledged it; %s owns %s now. Stop working on it.",
		h.label(), h.to, h.id, h.to, owns), nil
}

// errTeamStopping ends a handoff the team's Close cancelled.
var errTeamStopping = errors.New("the team is stopping")

// errMissed is a step whose deadline passed without an answer.
var errMissed = errors.New("no answer in time")

// undeliveredError is a step's message, or its answer, that could not be delivered.
type undeliveredError struct {
	typ inbox.MessageType
	err error
}

func (e *undeliveredError) Error() string {
	return fmt.Sprintf("the %s could not be delivered: %v", e.typ, e.err)
}

// exchange sends one step's message and waits for the receiver runtime's
// answer to it, the step's deadline or the end of ctx. The message is sent
// on a goroutine of the team so that the deadline holds even while its
// delivery waits (an inbox another process holds locked).
func (hs *Service) exchange(ctx context.Context, h *Handoff, from, to string, typ inbox.MessageType, content string, p Payload) (inbox.MessageType, error) {
	sent := make(chan error, 1)
	hs.d.Go(func(ctx context.Context) { // the team's: the send outlives a step that gave up waiting
		sent <- hs.deliver(ctx, from, to, typ, content, h, p)
	})
	deadline := time.NewTimer(hs.timeout())
	defer deadline.Stop()
	for {
		select {
		case a := <-h.answers:
			if a.err != nil {
				return "", &undeliveredError{a.typ, a.err}
			}
			return a.typ, nil
		case err := <-sent:
			if err != nil {
				return "", &undeliveredError{typ, err}
			}
			sent = nil
			if len(h.answers) == 0 { // the receiver's runtime did not answer as the message arrived
				h.waitingOnce.Do(func() { close(h.waiting) })
			}
		case <-deadline.C:
			return "", errMissed
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// failed ends a handoff whose step got no answer (missed says what did
// not happen) or whose step's message could not be delivered. A handoff
// the team stopped ends without a word: the team writes nothing more.
func (hs *Service) failed(ctx context.Context, h *Handoff, err error, missed string) (string, error) {
	var undelivered *undeliveredError
	switch {
	case errors.Is(err, errMissed):
		return hs.fail(ctx, h, event.OutcomeExpired, fmt.Sprintf(missed, hs.timeout()))
	case errors.As(err, &undelivered):
		return hs.fail(ctx, h, event.OutcomeFailed, undelivered.Error())
	}
	return "", err
}

// close closes h's request in the team's table with outcome o; false
// means the team's Close cancelled it first.
func (hs *Service) close(h *Handoff, o event.Outcome) bool {
	_, open := hs.d.Requests.AnswerMatch(h.id, request.Match{Kind: event.RequestHandoff, From: h.from}, o)
	return open
}

// fail ends a handoff that is still open: the task stays with the sender,
// and both sides are told why. outcome is event.OutcomeExpired when a step's
// deadline passed, event.OutcomeFailed otherwise.
func (hs *Service) fail(ctx context.Context, h *Handoff, outcome event.Outcome, why string) (string, error) {
	if !hs.close(h, outcome) {
		return "", errTeamStopping
	}
	return hs.failedAfter(ctx, h, h.accepted.Load(), outcome, why), nil
}

// failedAfter tells the sender (and, if told, the receiver, which had
// accepted) that the handoff failed, records it on both sides, and
// returns what the sender was told.
func (hs *Service) failedAfter(ctx context.Context, h *Handoff, told bool, outcome event.Outcome, why string) string {
	if outcome == event.OutcomeExpired {
		hs.d.Requests.Expired(h.from, h.ref(), outcome, why)
	} else {
		hs.d.Requests.Answered(h.from, h.ref(), event.ByRuntime, outcome, why)
	}
	p := Payload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Reason: why, By: "runtime"}
	content := handoffFailedText(h, why)
	if err := hs.deliver(ctx, h.to, h.from, TypeHandoffFailed, content, h, p); err != nil {
		hs.d.Events.Emit(event.Event{Agent: h.from, Payload: hs.d.Failure(event.ClassInbox, "handoff failed, and the sender could not be told: ", err)})
	}
	if told {
		msg := handoffFailedReceiverText(h, why)
		if err := hs.deliver(ctx, h.from, h.to, TypeHandoffFailed, msg, h, p); err != nil {
			hs.d.Events.Emit(event.Event{Agent: h.to, Payload: hs.d.Failure(event.ClassInbox, "handoff failed, and the receiver could not be told: ", err)})
		}
	}
	hs.setSide(ctx, h.from, h, registry.HandoffSender, registry.HandoffFailed, why)
	hs.setSide(ctx, h.to, h, registry.HandoffReceiver, registry.HandoffFailed, why)
	return content
}

// prepare checks a handoff before any message is sent: the receiver is
// an agent of this process, and a board task is the sender's own.
func (hs *Service) prepare(ctx context.Context, from string, spec tools.HandoffSpec) (*Handoff, error) {
	to := strings.TrimSpace(spec.To)
	if err := inbox.ValidateName(to); err != nil {
		return nil, err
	}
	if to == from {
		return nil, fmt.Errorf("you cannot hand a task to yourself")
	}
	if to == inbox.UserName {
		return nil, fmt.Errorf("the person does not take tasks: hand it to the lead or a teammate")
	}
	if to != inbox.LeadName {
		// One run on another worker has its runtime's part played here
		// (remoteVerdict).
		if _, err := hs.d.Agents.Receiver(ctx, to); err != nil {
			return nil, err
		}
	}
	if hs.d.Stopped() {
		return nil, errTeamStopping
	}
	h := &Handoff{id: protocol.NewID(event.RequestHandoff), from: from, to: to, task: strings.TrimSpace(spec.Task),
		reason: event.Clip(strings.TrimSpace(spec.Reason), 1000), summary: event.Clip(strings.TrimSpace(spec.Context), board.MaxTaskText),
		answers: make(chan answer, 1), waiting: make(chan struct{})}
	h.subject = event.Clip(h.task, 200)
	if !taskIDRe().MatchString(h.task) {
		return h, nil
	}
	f, err := hs.d.Board.Read(ctx)
	if err != nil {
		return nil, err
	}
	i := f.Find(h.task)
	if i < 0 {
		return nil, fmt.Errorf("%w %q: task_list shows the ids", board.ErrTaskNotFound, h.task)
	}
	task := f.Tasks[i]
	switch {
	case task.Status == board.TaskCompleted:
		return nil, fmt.Errorf("%s is already completed: there is nothing to hand over", task.ID)
	case task.Owner != from:
		return nil, fmt.Errorf("%s is owned by %s, not you: only its owner hands it over (claim it first)", task.ID, cmp.Or(task.Owner, "nobody"))
	}
	h.taskID, h.subject, h.description, h.role = task.ID, task.Subject, task.Description, task.Role
	return h, ctx.Err()
}

// label names the task in a sentence: "t3 (write the parser)" or the text.
func (h *Handoff) label() string {
	if h.taskID != "" {
		return fmt.Sprintf("%s (%s)", h.taskID, h.subject)
	}
	return fmt.Sprintf("the task %q", event.Clip(h.subject, 80))
}

// ref names the handoff as a protocol request.
func (h *Handoff) ref() event.RequestRef {
	return event.RequestRef{ID: h.id, RequestKind: event.RequestHandoff, From: h.from, To: h.to}
}

func (h *Handoff) payload() Payload {
	return Payload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Role: h.role, Reason: h.reason}
}

// answer hands the sender the receiver runtime's answer; one that comes
// after the sender stopped waiting is dropped.
func (h *Handoff) answer(a answer) {
	select {
	case h.answers <- a:
	default:
	}
}

// verdict is the receiver runtime's answer: "" accepts, otherwise why not.
func (hs *Service) verdict(ctx context.Context, h *Handoff) string {
	if h.to == inbox.LeadName {
		return "" // the lead coordinates every role and is never at a worker's limit
	}
	m, err := hs.d.Agents.Receiver(ctx, h.to)
	if err != nil {
		return err.Error()
	}
	if !m.Here {
		return remoteVerdict(h, m)
	}
	switch st := m.Status; st {
	case registry.StatusQueued, registry.StatusWorking:
		return fmt.Sprintf("busy: %s is already working at its limit (%s)", h.to, st)
	case registry.StatusShutdown, registry.StatusFailed:
		return fmt.Sprintf("%s is %s", h.to, st)
	}
	if h.role != "" && !strings.EqualFold(h.role, m.Role) {
		return fmt.Sprintf("its role does not fit: %s asks for a %s, %s is a %s", h.taskID, h.role, h.to, m.Role)
	}
	return ""
}

// deliver appends one step's message, then lets the runtime of the agent
// it was delivered to react (both ends are this process's agents).
func (hs *Service) deliver(ctx context.Context, from, to string, typ inbox.MessageType, content string, h *Handoff, p Payload) error {
	m := inbox.Message{Type: typ, From: from, To: to, Content: content, CorrelationID: h.id, TaskID: h.taskID}
	if err := hs.d.Requests.Send(ctx, m, p); err != nil {
		return err
	}
	if !hs.stalled(typ, h) {
		hs.React(ctx, typ, h)
	}
	return nil
}

// React is a runtime's answer to a handoff message delivered to its agent:
// the receiver's answers the request and acknowledges the context; the
// sender's hands the receiver's answers to the waiting run.
func (hs *Service) React(ctx context.Context, typ inbox.MessageType, h *Handoff) {
	switch typ {
	case TypeHandoffRequest:
		hs.answerRequest(ctx, h)
	case TypeContextTransfer:
		hs.acknowledgeContext(ctx, h)
	case TypeHandoffAccept, TypeHandoffReject, TypeHandoffComplete:
		h.answer(answer{typ: typ})
	}
}

// open reports whether h still waits for its outcome; a runtime that
// reacts late to a handoff that ended does nothing.
func (hs *Service) open(h *Handoff) bool {
	_, ok := hs.d.Requests.Get(h.id)
	return ok
}

// answerRequest is the receiver's runtime: accept or reject, no model involved.
func (hs *Service) answerRequest(ctx context.Context, h *Handoff) {
	if !hs.open(h) {
		return // the sender gave up waiting
	}
	p := h.payload()
	p.By = "runtime"
	typ, content := TypeHandoffAccept, handoffAcceptedText(h)
	if h.verdict != "" {
		hs.setSide(ctx, h.to, h, registry.HandoffReceiver, registry.HandoffFailed, "rejected: "+h.verdict)
		p.Reason = h.verdict
		typ, content = TypeHandoffReject, handoffRejectedText(h)
	} else {
		h.accepted.Store(true)
		hs.setSide(ctx, h.to, h, registry.HandoffReceiver, registry.HandoffAwaitingContext, "")
	}
	if err := hs.deliver(ctx, h.to, h.from, typ, content, h, p); err != nil {
		h.answer(answer{typ: typ, err: err})
	}
}

// acknowledgeContext is the receiver's runtime: the context is in its
// agent's inbox (which wakes it), so it acknowledges.
func (hs *Service) acknowledgeContext(ctx context.Context, h *Handoff) {
	if !hs.open(h) {
		return
	}
	p := Payload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, By: "runtime"}
	if err := hs.deliver(ctx, h.to, h.from, TypeHandoffComplete, handoffCompleteText(h), h, p); err != nil {
		h.answer(answer{typ: TypeHandoffComplete, err: err})
	}
}

// setSide records one side's state in its registry entry (the lead's in
// the registry's leadHandoffs) and logs it.
func (hs *Service) setSide(ctx context.Context, agent string, h *Handoff, role registry.HandoffSide, state registry.HandoffStatus, reason string) {
	peer := h.to
	if role == registry.HandoffReceiver {
		peer = h.from
	}
	entry := registry.HandoffState{ID: h.id, Role: role, Peer: peer, Task: event.Clip(h.task, 80), TaskID: h.taskID, State: state, Reason: reason, UpdatedAt: time.Now().UTC()}
	if err := hs.d.Registry.Change(ctx, func(c *registry.Config) error {
		var states *[]registry.HandoffState
		if agent == inbox.LeadName {
			states = &c.LeadHandoffs
		} else {
			i := c.Find(agent)
			if i < 0 {
				return statefile.ErrNoChange
			}
			states = &c.Teammates[i].Handoffs
			c.Teammates[i].UpdatedAt = entry.UpdatedAt
		}
		list := make([]registry.HandoffState, 0, len(*states)+1) // a new slice: cached copies share the old one
		for _, s := range *states {
			if s.ID != entry.ID || s.Role != entry.Role {
				list = append(list, s)
			}
		}
		list = append(list, entry)
		*states = list[max(0, len(list)-MaxStates):]
		return nil
	}); err != nil {
		hs.d.Events.Emit(event.Event{Agent: agent, Payload: hs.d.Failure(event.ClassRegistry, "registry: ", err)})
	}
	hs.d.Events.Emit(event.Event{Agent: agent, Payload: event.HandoffChanged{RequestID: h.id, Side: role, Task: h.task, TaskID: h.taskID,
		Peer: peer, State: state, Reason: reason}})
	hs.d.Notify()
}
