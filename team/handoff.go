package team

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/request"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
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

// DefaultHandoffTimeout bounds each step of a handoff.
const DefaultHandoffTimeout = 60 * time.Second

// maxHandoffStates is how many handoffs a registry entry keeps, newest last.
const maxHandoffStates = 5

// handoffPayload is the payload of every handoff message; context_transfer
// fills the context fields.
type handoffPayload struct {
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
type handoff struct {
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
	answers  chan handoffAnswer
	accepted atomic.Bool // the receiver's runtime accepted: it must hear of a failure
	// waiting is closed once the sender waits for an answer that did not
	// come with its message's delivery: its tool call stops waiting too.
	waiting     chan struct{}
	waitingOnce sync.Once
}

// handoffAnswer is the receiver runtime's answer, or, err set, the
// failure to deliver it.
type handoffAnswer struct {
	typ inbox.MessageType
	err error
}

// handoffs runs the handoffs of a team: the sender's side is one function
// (run), each receiver's runtime answers the messages delivered to its agent.
type handoffs struct {
	t *Team

	mu sync.Mutex
	// tasks are the board tasks being handed over, each with its handoff.
	tasks map[string]*handoff
	// stall, set only by tests, drops the runtime's reaction to a message
	// type: a step that never answers.
	stall func(typ inbox.MessageType, h *handoff) bool
}

func newHandoffs(t *Team) *handoffs { return &handoffs{t: t, tasks: map[string]*handoff{}} }

func (hs *handoffs) stalled(typ inbox.MessageType, h *handoff) bool {
	hs.mu.Lock()
	stall := hs.stall
	hs.mu.Unlock()
	return stall != nil && stall(typ, h)
}

// claim takes h's board task for the time of the handoff: one handoff of a task at a time.
func (hs *handoffs) claim(h *handoff) error {
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

func (hs *handoffs) release(h *handoff) {
	if h.taskID == "" {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.tasks, h.taskID)
}

func (hs *handoffs) timeout() time.Duration {
	if hs.t.opts.HandoffTimeout > 0 {
		return hs.t.opts.HandoffTimeout
	}
	return DefaultHandoffTimeout
}

var taskIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^t[0-9]+$`) })

// Handoff hands a task, with the sender's context, to another agent of
// this process (tools.Protocols). The runtimes of both sides run every step
// as its message is delivered; the result says how it went, or that it is
// still under way.
func (t *Team) Handoff(ctx context.Context, from string, spec tools.HandoffSpec) (string, error) {
	return t.handoffs.start(ctx, from, spec)
}

// start checks a handoff and runs it on a goroutine of the team. It
// returns the outcome, or, once a step waits for an answer that did not
// come at once, that the handoff is under way (its outcome then arrives as
// a message).
func (hs *handoffs) start(ctx context.Context, from string, spec tools.HandoffSpec) (string, error) {
	h, err := hs.prepare(ctx, from, spec)
	if err != nil {
		return "", err
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	t := hs.t
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithCancel(t.root)
		defer cancel()
		out, err := hs.run(ctx, h)
		done <- result{out, err}
	}()
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
func (hs *handoffs) run(ctx context.Context, h *handoff) (string, error) {
	t := hs.t
	if err := hs.claim(h); err != nil {
		return "", err
	}
	defer hs.release(h)
	h.verdict = hs.verdict(h) // judged as the request arrives, before it can wake the receiver
	if _, err := t.requests.Open(h.ref(), h.subject, hs.timeout(), nil); err != nil {
		return "", err
	}

	hs.setSide(h.from, h, HandoffSender, HandoffAwaitingAccept, "")
	answer, err := hs.exchange(ctx, h, h.from, h.to, TypeHandoffRequest, handoffRequestText(h), h.payload())
	var undelivered *undeliveredError
	switch {
	case errors.As(err, &undelivered) && undelivered.typ == TypeHandoffRequest:
		_, _ = hs.fail(h, OutcomeFailed, "the request could not be delivered: "+undelivered.err.Error())
		return "", undelivered.err
	case err != nil:
		return hs.failed(h, err, missedAnswer)
	case answer == TypeHandoffReject:
		if !hs.close(h, OutcomeRejected) {
			return "", errTeamStopping
		}
		t.requests.Answered(h.from, h.ref(), ByRuntime, OutcomeRejected, h.verdict)
		hs.setSide(h.from, h, HandoffSender, HandoffFailed, "rejected by "+h.to+"'s runtime: "+h.verdict)
		return handoffRejectedText(h), nil
	}

	// Accepted: the context is built from the tool call's words and the sender's conversation.
	hs.setSide(h.from, h, HandoffSender, HandoffContextPreparing, "")
	p := h.payload()
	p.Description, p.Summary = h.description, h.summary
	if msgs, ok := t.Conversation(h.from); ok {
		p.Done, p.Decisions, p.FilesTouched = workRecord(msgs)
	}
	hs.setSide(h.from, h, HandoffSender, HandoffAwaitingAck, "")
	if _, err := hs.exchange(ctx, h, h.from, h.to, TypeContextTransfer, contextText(h, p), p); err != nil {
		return hs.failed(h, err, missedAck)
	}

	// Acknowledged: only now does the task change owner, and only if the sender still owns it.
	if !hs.close(h, OutcomeCompleted) {
		return "", errTeamStopping
	}
	if h.taskID != "" {
		task, err := t.tasks.board.HandOver(ctx, h.taskID, h.from, h.to)
		if err != nil {
			return hs.failedAfter(h, true, OutcomeFailed, "the board did not change owner: "+err.Error()), nil
		}
		t.tasks.emit(h.from, TaskChanged{Change: TaskChangeHandedOver, To: h.to}, task)
	}
	t.requests.Answered(h.from, h.ref(), ByRuntime, OutcomeCompleted, "")
	hs.setSide(h.from, h, HandoffSender, HandoffCompleted, "")
	hs.setSide(h.to, h, HandoffReceiver, HandoffCompleted, "")
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
func (hs *handoffs) exchange(ctx context.Context, h *handoff, from, to string, typ inbox.MessageType, content string, p handoffPayload) (inbox.MessageType, error) {
	sent := make(chan error, 1)
	hs.t.wg.Add(1)
	go func() {
		defer hs.t.wg.Done()
		sent <- hs.deliver(from, to, typ, content, h, p)
	}()
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
func (hs *handoffs) failed(h *handoff, err error, missed string) (string, error) {
	var undelivered *undeliveredError
	switch {
	case errors.Is(err, errMissed):
		return hs.fail(h, OutcomeExpired, fmt.Sprintf(missed, hs.timeout()))
	case errors.As(err, &undelivered):
		return hs.fail(h, OutcomeFailed, undelivered.Error())
	}
	return "", err
}

// close closes h's request in the team's table with outcome o; false
// means the team's Close cancelled it first.
func (hs *handoffs) close(h *handoff, o Outcome) bool {
	_, open := hs.t.requests.AnswerMatch(h.id, request.Match{Kind: RequestHandoff, From: h.from}, o)
	return open
}

// fail ends a handoff that is still open: the task stays with the sender,
// and both sides are told why. outcome is OutcomeExpired when a step's
// deadline passed, OutcomeFailed otherwise.
func (hs *handoffs) fail(h *handoff, outcome Outcome, why string) (string, error) {
	if !hs.close(h, outcome) {
		return "", errTeamStopping
	}
	return hs.failedAfter(h, h.accepted.Load(), outcome, why), nil
}

// failedAfter tells the sender (and, if told, the receiver, which had
// accepted) that the handoff failed, records it on both sides, and
// returns what the sender was told.
func (hs *handoffs) failedAfter(h *handoff, told bool, outcome Outcome, why string) string {
	t := hs.t
	if outcome == OutcomeExpired {
		t.requests.Expired(h.from, h.ref(), outcome, why)
	} else {
		t.requests.Answered(h.from, h.ref(), ByRuntime, outcome, why)
	}
	p := handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Reason: why, By: "runtime"}
	content := handoffFailedText(h, why)
	if err := hs.deliver(h.to, h.from, TypeHandoffFailed, content, h, p); err != nil {
		t.events.Emit(Event{Agent: h.from, Payload: failure(ClassInbox, "handoff failed, and the sender could not be told: ", err)})
	}
	if told {
		msg := handoffFailedReceiverText(h, why)
		if err := hs.deliver(h.from, h.to, TypeHandoffFailed, msg, h, p); err != nil {
			t.events.Emit(Event{Agent: h.to, Payload: failure(ClassInbox, "handoff failed, and the receiver could not be told: ", err)})
		}
	}
	hs.setSide(h.from, h, HandoffSender, HandoffFailed, why)
	hs.setSide(h.to, h, HandoffReceiver, HandoffFailed, why)
	return content
}

// prepare checks a handoff before any message is sent: the receiver is
// an agent of this process, and a board task is the sender's own.
func (hs *handoffs) prepare(ctx context.Context, from string, spec tools.HandoffSpec) (*handoff, error) {
	t := hs.t
	to := strings.TrimSpace(spec.To)
	if err := workspace.ValidateName(to); err != nil {
		return nil, err
	}
	if to == from {
		return nil, fmt.Errorf("you cannot hand a task to yourself")
	}
	if to == workspace.UserName {
		return nil, fmt.Errorf("the person does not take tasks: hand it to the lead or a teammate")
	}
	if to != workspace.LeadName {
		if _, err := t.roster.member(to); err != nil {
			if _, elsewhere := t.remote(to); !elsewhere {
				return nil, err
			}
			// Run on another worker: its runtime's part is played here (remote.go).
		}
	}
	if t.stopped() {
		return nil, errTeamStopping
	}
	h := &handoff{id: protocol.NewID(RequestHandoff), from: from, to: to, task: strings.TrimSpace(spec.Task),
		reason: event.Clip(strings.TrimSpace(spec.Reason), 1000), summary: event.Clip(strings.TrimSpace(spec.Context), board.MaxTaskText),
		answers: make(chan handoffAnswer, 1), waiting: make(chan struct{})}
	h.subject = event.Clip(h.task, 200)
	if !taskIDRe().MatchString(h.task) {
		return h, nil
	}
	f, err := t.tasks.board.Read()
	if err != nil {
		return nil, err
	}
	i := f.Find(h.task)
	if i < 0 {
		return nil, notFound(h.task)
	}
	task := f.Tasks[i]
	switch {
	case task.Status == board.TaskCompleted:
		return nil, fmt.Errorf("%s is already completed: there is nothing to hand over", task.ID)
	case task.Owner != from:
		return nil, fmt.Errorf("%s is owned by %s, not you: only its owner hands it over (claim it first)", task.ID, orNobody(task.Owner))
	}
	h.taskID, h.subject, h.description, h.role = task.ID, task.Subject, task.Description, task.Role
	return h, ctx.Err()
}

// label names the task in a sentence: "t3 (write the parser)" or the text.
func (h *handoff) label() string {
	if h.taskID != "" {
		return fmt.Sprintf("%s (%s)", h.taskID, h.subject)
	}
	return fmt.Sprintf("the task %q", event.Clip(h.subject, 80))
}

// ref names the handoff as a protocol request.
func (h *handoff) ref() RequestRef {
	return RequestRef{ID: h.id, RequestKind: RequestHandoff, From: h.from, To: h.to}
}

func (h *handoff) payload() handoffPayload {
	return handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Role: h.role, Reason: h.reason}
}

// answer hands the sender the receiver runtime's answer; one that comes
// after the sender stopped waiting is dropped.
func (h *handoff) answer(a handoffAnswer) {
	select {
	case h.answers <- a:
	default:
	}
}

// verdict is the receiver runtime's answer: "" accepts, otherwise why not.
func (hs *handoffs) verdict(h *handoff) string {
	t := hs.t
	if h.to == workspace.LeadName {
		return "" // the lead coordinates every role and is never at a worker's limit
	}
	m, err := t.roster.member(h.to)
	if err != nil {
		if mb, elsewhere := t.remote(h.to); elsewhere {
			return hs.remoteVerdict(h, mb)
		}
		return err.Error()
	}
	switch st := t.roster.statusOf(m); st {
	case StatusQueued, StatusWorking:
		return fmt.Sprintf("busy: %s is already working at its limit (%s)", h.to, st)
	case StatusShutdown, StatusFailed:
		return fmt.Sprintf("%s is %s", h.to, st)
	}
	if h.role != "" && !strings.EqualFold(h.role, m.role) {
		return fmt.Sprintf("its role does not fit: %s asks for a %s, %s is a %s", h.taskID, h.role, h.to, m.role)
	}
	return ""
}

// deliver appends one step's message, then lets the runtime of the agent
// it was delivered to react (both ends are this process's agents).
func (hs *handoffs) deliver(from, to string, typ inbox.MessageType, content string, h *handoff, p handoffPayload) error {
	m := inbox.Message{Type: typ, From: from, To: to, Content: content, CorrelationID: h.id, TaskID: h.taskID}
	if err := hs.t.requests.Send(m, p); err != nil {
		return err
	}
	if !hs.stalled(typ, h) {
		hs.react(typ, h)
	}
	return nil
}

// react is a runtime's answer to a handoff message delivered to its agent:
// the receiver's answers the request and acknowledges the context; the
// sender's hands the receiver's answers to the waiting run.
func (hs *handoffs) react(typ inbox.MessageType, h *handoff) {
	switch typ {
	case TypeHandoffRequest:
		hs.answerRequest(h)
	case TypeContextTransfer:
		hs.acknowledgeContext(h)
	case TypeHandoffAccept, TypeHandoffReject, TypeHandoffComplete:
		h.answer(handoffAnswer{typ: typ})
	}
}

// open reports whether h still waits for its outcome; a runtime that
// reacts late to a handoff that ended does nothing.
func (hs *handoffs) open(h *handoff) bool {
	_, ok := hs.t.requests.Get(h.id)
	return ok
}

// answerRequest is the receiver's runtime: accept or reject, no model involved.
func (hs *handoffs) answerRequest(h *handoff) {
	if !hs.open(h) {
		return // the sender gave up waiting
	}
	p := h.payload()
	p.By = "runtime"
	typ, content := TypeHandoffAccept, handoffAcceptedText(h)
	if h.verdict != "" {
		hs.setSide(h.to, h, HandoffReceiver, HandoffFailed, "rejected: "+h.verdict)
		p.Reason = h.verdict
		typ, content = TypeHandoffReject, handoffRejectedText(h)
	} else {
		h.accepted.Store(true)
		hs.setSide(h.to, h, HandoffReceiver, HandoffAwaitingContext, "")
	}
	if err := hs.deliver(h.to, h.from, typ, content, h, p); err != nil {
		h.answer(handoffAnswer{typ: typ, err: err})
	}
}

// acknowledgeContext is the receiver's runtime: the context is in its
// agent's inbox (which wakes it), so it acknowledges.
func (hs *handoffs) acknowledgeContext(h *handoff) {
	if !hs.open(h) {
		return
	}
	p := handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, By: "runtime"}
	if err := hs.deliver(h.to, h.from, TypeHandoffComplete, handoffCompleteText(h), h, p); err != nil {
		h.answer(handoffAnswer{typ: TypeHandoffComplete, err: err})
	}
}

// setSide records one side's state in its registry entry (the lead's in
// the registry's leadHandoffs) and logs it.
func (hs *handoffs) setSide(agent string, h *handoff, role HandoffSide, state HandoffStatus, reason string) {
	t := hs.t
	peer := h.to
	if role == HandoffReceiver {
		peer = h.from
	}
	entry := HandoffState{ID: h.id, Role: role, Peer: peer, Task: event.Clip(h.task, 80), TaskID: h.taskID, State: state, Reason: reason, UpdatedAt: time.Now().UTC()}
	if _, err := t.reg.Update(func(c *Config) error {
		var states *[]HandoffState
		if agent == workspace.LeadName {
			states = &c.LeadHandoffs
		} else {
			i := c.Find(agent)
			if i < 0 {
				return errNoChange
			}
			states = &c.Teammates[i].Handoffs
			c.Teammates[i].UpdatedAt = entry.UpdatedAt
		}
		list := make([]HandoffState, 0, len(*states)+1) // a new slice: cached copies share the old one
		for _, s := range *states {
			if s.ID != entry.ID || s.Role != entry.Role {
				list = append(list, s)
			}
		}
		list = append(list, entry)
		*states = list[max(0, len(list)-maxHandoffStates):]
		return nil
	}); err != nil {
		t.events.Emit(Event{Agent: agent, Payload: failure(ClassRegistry, "registry: ", err)})
	}
	t.events.Emit(Event{Agent: agent, Payload: HandoffChanged{RequestID: h.id, Side: role, Task: h.task, TaskID: h.taskID,
		Peer: peer, State: state, Reason: reason}})
	t.notifyChanged()
}
