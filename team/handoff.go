package team

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Handoff message types (SPEC §6); each one's correlation_id is the handoff's request id.
const (
	TypeHandoffRequest  = "handoff_request"
	TypeHandoffAccept   = "handoff_accept"
	TypeHandoffReject   = "handoff_reject"
	TypeContextTransfer = "context_transfer"
	TypeHandoffComplete = "handoff_complete"
	TypeHandoffFailed   = "handoff_failed"
)

// Handoff states of each side, shown in the registry. The sender goes
// awaiting_accept → context_preparing → awaiting_ack; the receiver, once its
// runtime accepted, is awaiting_context; both end completed or failed.
const (
	HandoffAwaitingAccept   = "awaiting_accept"
	HandoffContextPreparing = "context_preparing"
	HandoffAwaitingAck      = "awaiting_ack"
	HandoffAwaitingContext  = "awaiting_context"
	HandoffCompleted        = "completed"
	HandoffFailed           = "failed"
)

// Sides of a handoff.
const (
	HandoffSender   = "sender"
	HandoffReceiver = "receiver"
)

// DefaultHandoffTimeout bounds each step of a handoff.
const DefaultHandoffTimeout = 60 * time.Second

// maxHandoffStates is how many handoffs a registry entry keeps, newest last.
const maxHandoffStates = 5

// HandoffState is one side of a handoff as the registry shows it.
type HandoffState struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"` // sender or receiver
	Peer      string    `json:"peer"`
	Task      string    `json:"task"`
	TaskID    string    `json:"task_id,omitempty"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

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

// Steps of a handoff as a whole; each waiting step has its own deadline.
const (
	stepNew         = iota
	stepRequested   // the sender waits for accept or reject
	stepPreparing   // accepted: the sender's runtime builds the context
	stepTransferred // the context is sent: the sender waits for the ack
	stepDone        // completed or failed
)

// stepMissed says what did not happen when a step's deadline passed.
var stepMissed = [...]string{
	stepRequested:   "no answer to the handoff request within %s",
	stepPreparing:   "the context was not ready within %s",
	stepTransferred: "no acknowledgement of the context within %s",
	stepDone:        "",
}

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

	// Guarded by handoffs.mu.
	step     int
	accepted bool // the receiver's runtime accepted: it must hear of a failure
	timer    *time.Timer
	outcome  string // what the sender's tool call reports once done
	// finished is closed by finish: a handoff at stepDone may not have its
	// outcome written yet (the runtime is still telling both sides).
	finished chan struct{}
}

// handoffs are the open handoffs of a team. The zero value is ready.
type handoffs struct {
	mu   sync.Mutex
	open map[string]*handoff
	// stall, set only by tests, drops the runtime's reaction to a message
	// type: a step that never answers.
	stall func(typ string, h *handoff) bool
}

func (hs *handoffs) add(h *handoff) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.open == nil {
		hs.open = map[string]*handoff{}
	}
	for _, o := range hs.open {
		if h.taskID != "" && o.taskID == h.taskID {
			return fmt.Errorf("%s is already being handed to %s (request %s): wait for the outcome", h.taskID, o.to, o.id)
		}
	}
	hs.open[h.id] = h
	return nil
}

func (hs *handoffs) stalled(typ string, h *handoff) bool {
	hs.mu.Lock()
	stall := hs.stall
	hs.mu.Unlock()
	return stall != nil && stall(typ, h)
}

func (hs *handoffs) stepOf(h *handoff) int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return h.step
}

func (hs *handoffs) outcomeOf(h *handoff) (int, string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return h.step, h.outcome
}

func (t *Team) handoffTimeout() time.Duration {
	if t.opts.HandoffTimeout > 0 {
		return t.opts.HandoffTimeout
	}
	return DefaultHandoffTimeout
}

// advance moves h from step from to step to, compare-and-set, so a late
// answer and a deadline never both act; it arms the new step's deadline.
func (t *Team) advance(h *handoff, from, to int) bool {
	hs := &t.handoffs
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h.step != from {
		return false
	}
	h.step = to
	if h.timer != nil {
		h.timer.Stop()
	}
	if to == stepDone {
		delete(hs.open, h.id)
		return true
	}
	timeout := t.handoffTimeout()
	h.timer = time.AfterFunc(timeout, func() {
		if t.ctx.Err() == nil {
			t.failHandoff(h, to, OutcomeExpired, fmt.Sprintf(stepMissed[to], timeout))
		}
	})
	return true
}

// finish records the sender's outcome once h is done.
func (t *Team) finish(h *handoff, outcome string) {
	t.handoffs.mu.Lock()
	h.outcome = outcome
	t.handoffs.mu.Unlock()
	close(h.finished) // every path to stepDone finishes once
}

var taskIDRe = regexp.MustCompile(`^t[0-9]+$`)

// Handoff hands a task, with the sender's context, to another agent of
// this process (tools.Protocols). The runtimes of both sides run every step
// as its message is delivered; the result says how it went.
func (t *Team) Handoff(ctx context.Context, from string, spec tools.HandoffSpec) (string, error) {
	h, err := t.newHandoff(ctx, from, spec)
	if err != nil {
		return "", err
	}
	if err := t.handoffs.add(h); err != nil {
		return "", err
	}
	h.verdict = t.verdict(h) // judged as the request arrives, before it can wake the receiver
	t.events.Emit(Event{Agent: h.from, Payload: RequestOpened{RequestRef: h.ref(),
		Deadline: time.Now().Add(t.handoffTimeout()).UTC(), Text: h.subject}})
	t.advance(h, stepNew, stepRequested)
	t.setHandoffSide(h.from, h, HandoffSender, HandoffAwaitingAccept, "")
	content := handoffRequestText(h)
	if err := t.sendHandoff(h.from, h.to, TypeHandoffRequest, content, h, h.payload()); err != nil {
		t.failHandoff(h, stepRequested, OutcomeFailed, "the request could not be delivered: "+err.Error())
		return "", err
	}
	if step, _ := t.handoffs.outcomeOf(h); step == stepDone {
		select {
		case <-h.finished:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		_, outcome := t.handoffs.outcomeOf(h)
		return outcome, nil
	}
	return fmt.Sprintf("The handoff of %s to %s (request %s) is under way; the outcome arrives as a handoff_complete, handoff_reject or handoff_failed message within %s per step. Until then the task is yours.",
		h.label(), h.to, h.id, t.handoffTimeout()), nil
}

// newHandoff checks a handoff before any message is sent: the receiver is
// an agent of this process, and a board task is the sender's own.
func (t *Team) newHandoff(ctx context.Context, from string, spec tools.HandoffSpec) (*handoff, error) {
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
		if _, err := t.member(to); err != nil {
			return nil, err
		}
	}
	if err := t.ctx.Err(); err != nil {
		return nil, fmt.Errorf("the team is stopping")
	}
	h := &handoff{id: newRequestID(RequestHandoff), from: from, to: to, task: strings.TrimSpace(spec.Task), finished: make(chan struct{}),
		reason: clip(strings.TrimSpace(spec.Reason), 1000), summary: clip(strings.TrimSpace(spec.Context), board.MaxTaskText)}
	h.subject = clip(h.task, 200)
	if !taskIDRe.MatchString(h.task) {
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
	return fmt.Sprintf("the task %q", clip(h.subject, 80))
}

// ref names the handoff as a protocol request.
func (h *handoff) ref() RequestRef {
	return RequestRef{ID: h.id, RequestKind: RequestHandoff, From: h.from, To: h.to}
}

func (h *handoff) payload() handoffPayload {
	return handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Role: h.role, Reason: h.reason}
}

// verdict is the receiver runtime's answer: "" accepts, otherwise why not.
func (t *Team) verdict(h *handoff) string {
	if h.to == workspace.LeadName {
		return "" // the lead coordinates every role and is never at a worker's limit
	}
	m, err := t.member(h.to)
	if err != nil {
		return err.Error()
	}
	switch st := t.statusOf(m); st {
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

// sendHandoff delivers one step's message, then lets the runtime of the
// agent it was delivered to react (both ends are this process's agents).
func (t *Team) sendHandoff(from, to, typ, content string, h *handoff, p handoffPayload) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	m, err := t.store.Append(to, inbox.Message{Type: typ, From: from, To: to, Content: content, CorrelationID: h.id, TaskID: h.taskID, Payload: raw})
	if err != nil {
		return err
	}
	t.events.Emit(Event{Payload: Delivered(m)})
	t.notifyChanged()
	if !t.handoffs.stalled(typ, h) {
		t.reactHandoff(typ, h)
	}
	return nil
}

// reactHandoff is a runtime's answer to a handoff message delivered to its agent.
func (t *Team) reactHandoff(typ string, h *handoff) {
	switch typ {
	case TypeHandoffRequest:
		t.answerHandoffRequest(h)
	case TypeHandoffAccept:
		t.transferContext(h)
	case TypeHandoffReject:
		if t.advance(h, stepRequested, stepDone) {
			why := "rejected by " + h.to + "'s runtime: " + h.verdict
			t.answered(h.from, h.ref(), ByRuntime, OutcomeRejected, h.verdict)
			t.setHandoffSide(h.from, h, HandoffSender, HandoffFailed, why)
			t.finish(h, handoffRejectedText(h))
		}
	case TypeContextTransfer:
		t.acknowledgeContext(h)
	case TypeHandoffComplete:
		t.completeHandoff(h)
	}
}

// answerHandoffRequest is the receiver's runtime: accept or reject, no model involved.
func (t *Team) answerHandoffRequest(h *handoff) {
	if t.handoffs.stepOf(h) != stepRequested {
		return // the sender gave up waiting
	}
	p := h.payload()
	p.By = "runtime"
	if h.verdict != "" {
		t.setHandoffSide(h.to, h, HandoffReceiver, HandoffFailed, "rejected: "+h.verdict)
		p.Reason = h.verdict
		content := handoffRejectedText(h)
		t.sendOrFail(h, stepRequested, h.to, h.from, TypeHandoffReject, content, p)
		return
	}
	t.handoffs.mu.Lock()
	h.accepted = true
	t.handoffs.mu.Unlock()
	t.setHandoffSide(h.to, h, HandoffReceiver, HandoffAwaitingContext, "")
	content := handoffAcceptedText(h)
	t.sendOrFail(h, stepRequested, h.to, h.from, TypeHandoffAccept, content, p)
}

// transferContext is the sender's runtime after an accept: it builds the
// context from the tool call's words and the sender's conversation and sends it.
func (t *Team) transferContext(h *handoff) {
	if !t.advance(h, stepRequested, stepPreparing) {
		return
	}
	t.setHandoffSide(h.from, h, HandoffSender, HandoffContextPreparing, "")
	p := h.payload()
	p.Description, p.Summary = h.description, h.summary
	if msgs, ok := t.Conversation(h.from); ok {
		p.Done, p.Decisions, p.FilesTouched = workRecord(msgs)
	}
	content := contextText(h, p)
	if !t.advance(h, stepPreparing, stepTransferred) {
		return
	}
	t.setHandoffSide(h.from, h, HandoffSender, HandoffAwaitingAck, "")
	t.sendOrFail(h, stepTransferred, h.from, h.to, TypeContextTransfer, content, p)
}

// acknowledgeContext is the receiver's runtime: the context is in its
// agent's inbox (which wakes it), so it acknowledges.
func (t *Team) acknowledgeContext(h *handoff) {
	if t.handoffs.stepOf(h) != stepTransferred {
		return
	}
	p := handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, By: "runtime"}
	content := handoffCompleteText(h)
	t.sendOrFail(h, stepTransferred, h.to, h.from, TypeHandoffComplete, content, p)
}

// completeHandoff is the sender's runtime at the ack: only now does the
// task change owner, and only if the sender still owns it.
func (t *Team) completeHandoff(h *handoff) {
	if !t.advance(h, stepTransferred, stepDone) {
		return
	}
	if h.taskID != "" {
		task, err := t.tasks.board.HandOver(t.ctx, h.taskID, h.from, h.to)
		if err != nil {
			t.failedAfter(h, true, OutcomeFailed, "the board did not change owner: "+err.Error())
			return
		}
		t.tasks.emit(h.from, TaskChanged{Change: TaskChangeHandedOver, To: h.to}, task)
	}
	t.answered(h.from, h.ref(), ByRuntime, OutcomeCompleted, "")
	t.setHandoffSide(h.from, h, HandoffSender, HandoffCompleted, "")
	t.setHandoffSide(h.to, h, HandoffReceiver, HandoffCompleted, "")
	owns := "it"
	if h.taskID != "" {
		owns = h.taskID + " on the board"
	}
	t.finish(h, fmt.Sprintf("Handed %s to %s (request %s): it accepted, received your context and acknowledged it; %s owns %s now. Stop working on it.",
		h.label(), h.to, h.id, h.to, owns))
}

// sendOrFail sends a step's message; if it cannot be delivered the handoff fails.
func (t *Team) sendOrFail(h *handoff, step int, from, to, typ, content string, p handoffPayload) {
	if err := t.sendHandoff(from, to, typ, content, h, p); err != nil {
		t.failHandoff(h, step, OutcomeFailed, fmt.Sprintf("the %s could not be delivered: %v", typ, err))
	}
}

// failHandoff ends a handoff that is still at step: the task stays with
// the sender, and both sides are told why. outcome is OutcomeExpired when
// the step's deadline passed, OutcomeFailed otherwise.
func (t *Team) failHandoff(h *handoff, step int, outcome Outcome, why string) {
	if !t.advance(h, step, stepDone) {
		return
	}
	t.handoffs.mu.Lock()
	told := h.accepted
	t.handoffs.mu.Unlock()
	t.failedAfter(h, told, outcome, why)
}

// failedAfter tells the sender (and, if told, the receiver, which had
// accepted) that the handoff failed, then records it on both sides.
func (t *Team) failedAfter(h *handoff, told bool, outcome Outcome, why string) {
	if outcome == OutcomeExpired {
		t.expired(h.from, h.ref(), outcome, why)
	} else {
		t.answered(h.from, h.ref(), ByRuntime, outcome, why)
	}
	p := handoffPayload{RequestID: h.id, Task: h.subject, TaskID: h.taskID, Reason: why, By: "runtime"}
	content := handoffFailedText(h, why)
	if err := t.sendHandoff(h.to, h.from, TypeHandoffFailed, content, h, p); err != nil {
		t.events.Emit(Event{Agent: h.from, Payload: failure(ClassInbox, "handoff failed, and the sender could not be told: ", err)})
	}
	if told {
		msg := handoffFailedReceiverText(h, why)
		if err := t.sendHandoff(h.from, h.to, TypeHandoffFailed, msg, h, p); err != nil {
			t.events.Emit(Event{Agent: h.to, Payload: failure(ClassInbox, "handoff failed, and the receiver could not be told: ", err)})
		}
	}
	t.setHandoffSide(h.from, h, HandoffSender, HandoffFailed, why)
	t.setHandoffSide(h.to, h, HandoffReceiver, HandoffFailed, why)
	t.finish(h, content)
}

// setHandoffSide records one side's state in its registry entry (the
// lead's in the registry's leadHandoffs) and logs it.
func (t *Team) setHandoffSide(agent string, h *handoff, role, state, reason string) {
	peer := h.to
	if role == HandoffReceiver {
		peer = h.from
	}
	entry := HandoffState{ID: h.id, Role: role, Peer: peer, Task: clip(h.task, 80), TaskID: h.taskID, State: state, Reason: reason, UpdatedAt: time.Now().UTC()}
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
