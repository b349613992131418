package team

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/request"
	"github.com/agentteam/agentteam/workspace"
)

// Protocol message types (SPEC §6): each reply's correlation_id is its
// request's id, which the request also carries as payload.request_id.
const (
	TypeShutdownRequest      inbox.MessageType = "shutdown_request"
	TypeShutdownResponse     inbox.MessageType = "shutdown_response"
	TypePlanApprovalRequest  inbox.MessageType = "plan_approval_request"
	TypePlanApprovalResponse inbox.MessageType = "plan_approval_response"
)

// PlanState is where a plan-mode teammate's plan is, shown in the registry.
type PlanState string

// Plan states.
const (
	PlanDrafting         PlanState = "drafting"
	PlanAwaitingApproval PlanState = "awaiting_approval"
	PlanApproved         PlanState = "approved"
	PlanRejected         PlanState = "rejected"
)

// Default protocol timeouts.
const (
	DefaultShutdownTimeout = 60 * time.Second
	DefaultPlanTimeout     = 15 * time.Minute
)

// RequestKind is the protocol a request belongs to; the request table
// defines it, the protocols name its values.
type RequestKind = request.Kind

// Kinds of protocol request (SPEC §6).
const (
	RequestShutdown     RequestKind = "shutdown"
	RequestPlanApproval RequestKind = "plan_approval"
	RequestHandoff      RequestKind = "handoff"
)

// Outcome is how a protocol request ended (defined with the request table).
type Outcome = request.Outcome

// Outcomes of a request.
const (
	OutcomeApproved          = request.Approved // the one asked said yes, or the runtime did for it
	OutcomeRejected          = request.Rejected
	OutcomeExpired           = request.Expired // no answer in time, and nothing was done for it
	OutcomeCompleted Outcome = "completed"     // a handoff: the task changed owner
	OutcomeFailed    Outcome = "failed"        // it could not go on: not delivered, or a step failed
	OutcomeForced    Outcome = "forced"        // no answer in time: the runtime shut the teammate down
)

// shutdownPayload is the payload of shutdown_request and shutdown_response.
type shutdownPayload struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Forced    bool   `json:"forced,omitempty"`
	// By says who answered: the teammate, or the runtime for it.
	By string `json:"by,omitempty"`
}

// planPayload is the payload of plan_approval_request and _response.
type planPayload struct {
	RequestID string `json:"request_id"`
	Plan      string `json:"plan,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
}

// newRequestID is short enough for a model to copy: "shutdown-1a2b3c4d".
func newRequestID(kind RequestKind) string {
	prefix, _, _ := strings.Cut(string(kind), "_")
	return prefix + "-" + uuid.NewString()[:8]
}

// open logs a new request of ref's kind and parties (text is what it asks
// about; ref.ID, if empty, is a new id), then registers it in the team's
// table, whose timer runs onExpire if no answer closes it by the deadline.
// Without onExpire the table arms no timer: the request's owner waits for
// the deadline itself (a handoff, one deadline per step).
func (t *Team) open(ref RequestRef, text string, timeout time.Duration, onExpire func(request.Request)) (RequestRef, error) {
	if ref.ID == "" {
		ref.ID = newRequestID(ref.RequestKind)
	}
	opened := time.Now().UTC()
	t.events.Emit(Event{Agent: subjectOf(ref), Payload: RequestOpened{RequestRef: ref, Deadline: opened.Add(timeout), Text: text}})
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To, Opened: opened}
	armed := timeout
	if onExpire == nil {
		armed = 0
	}
	if _, err := t.requests.Open(r, armed, onExpire); err != nil {
		t.answered(subjectOf(ref), ref, ByRuntime, OutcomeFailed, err.Error())
		return ref, err
	}
	return ref, nil
}

// reopen registers a request under a known id (a resumed team's, whose
// opening is already in the log).
func (t *Team) reopen(ref RequestRef, timeout time.Duration, onExpire func(request.Request)) {
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To}
	_, _ = t.requests.Open(r, timeout, onExpire) // refused only once the team is stopping
}

// refOf names a request of the table as the events do.
func refOf(r request.Request) RequestRef {
	return RequestRef{ID: r.ID, RequestKind: r.Kind, From: r.From, To: r.To}
}

// subjectOf is the agent a request's events are about: the teammate asked
// to shut down, the author of a plan, the sender of a handoff.
func subjectOf(ref RequestRef) string {
	if ref.RequestKind == RequestShutdown {
		return ref.To
	}
	return ref.From
}

// teammateMatch fits a teammate's requests of a kind: the shutdown it is
// asked, the plan it submitted.
func teammateMatch(kind RequestKind, teammate string) request.Match {
	if kind == RequestShutdown {
		return request.Match{Kind: kind, To: teammate}
	}
	return request.Match{Kind: kind, From: teammate}
}

// resolve closes a teammate's open request of a kind with outcome o; it
// reports false if it was already closed (answered, timed out) or is not
// of that kind and teammate.
func (t *Team) resolve(id string, kind RequestKind, teammate string, o Outcome) (RequestRef, bool) {
	r, ok := t.requests.Answer(id, teammateMatch(kind, teammate), o)
	return refOf(r), ok
}

// expiredMember is the teammate of a request whose deadline passed, or
// nil when the team is stopping (or the teammate is not run here).
func (t *Team) expiredMember(name string) *member {
	if t.ctx.Err() != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.members[name]
}

// openRequestFor returns the id of a teammate's open request of a kind.
func (t *Team) openRequestFor(kind RequestKind, teammate string) string {
	r, _ := t.requests.Find(teammateMatch(kind, teammate))
	return r.ID
}

// answered logs that a request ended with an answer (by the one asked,
// the lead, the person or ByRuntime), or failed before one.
func (t *Team) answered(agent string, ref RequestRef, by string, outcome Outcome, reason string) {
	t.events.Emit(Event{Agent: agent, Payload: RequestAnswered{RequestRef: ref, By: by, Outcome: outcome, Reason: reason}})
}

// expired logs that a request's deadline passed, and what was done then.
func (t *Team) expired(agent string, ref RequestRef, outcome Outcome, reason string) {
	t.events.Emit(Event{Agent: agent, Payload: RequestExpired{RequestRef: ref, Outcome: outcome, Reason: reason}})
}

// send delivers a protocol message with its correlation id and payload.
func (t *Team) send(from, to string, typ inbox.MessageType, content, correlation string, payload any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	m, err := t.store.Append(to, inbox.Message{Type: typ, From: from, To: to, Content: content, CorrelationID: correlation, Payload: raw})
	if err != nil {
		return err
	}
	t.events.Emit(Event{Payload: Delivered(m)})
	t.notifyChanged()
	return nil
}

// member returns a teammate this process runs.
func (t *Team) member(name string) (*member, error) {
	t.mu.Lock()
	m, ok := t.members[name]
	t.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := CheckRecipient(t.reg, name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s is not run by this agentteam process", name)
}

func (t *Team) statusOf(m *member) Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return m.status
}

func boolp(b bool) *bool { return &b }

// RequestShutdown asks a teammate to shut down (tools.Protocols).
func (t *Team) RequestShutdown(ctx context.Context, from, name, reason string) (string, error) {
	if from != workspace.LeadName && from != workspace.UserName {
		return "", fmt.Errorf("only the lead can ask a teammate to shut down")
	}
	m, err := t.member(name)
	if err != nil {
		return "", err
	}
	if st := t.statusOf(m); st == StatusShutdown || st == StatusFailed {
		return "", fmt.Errorf("%s is already %s", name, st)
	}
	if id := t.openRequestFor(RequestShutdown, name); id != "" {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	timeout := t.opts.ShutdownTimeout
	ref, err := t.open(RequestRef{RequestKind: RequestShutdown, From: from, To: name}, reason, timeout, t.forceShutdown)
	if err != nil {
		return "", err
	}
	id := ref.ID
	if err := t.send(from, name, TypeShutdownRequest, shutdownRequestText(reason, id), id, shutdownPayload{RequestID: id, Reason: reason}); err != nil {
		if _, open := t.resolve(id, RequestShutdown, name, OutcomeFailed); open {
			t.answered(name, ref, ByRuntime, OutcomeFailed, "the request could not be delivered: "+err.Error())
		}
		return "", err
	}
	return fmt.Sprintf("Asked %s to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, id, timeout), nil
}

// RespondShutdown is a teammate's answer to a shutdown request (tools.Protocols).
func (t *Team) RespondShutdown(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	m, err := t.member(from)
	if err != nil {
		return "", err
	}
	outcome := OutcomeApproved
	if !approve {
		outcome = OutcomeRejected
	}
	ref, ok := t.resolve(id, RequestShutdown, from, outcome)
	if !ok {
		return "", fmt.Errorf("there is no open shutdown request %q for you", id)
	}
	t.answered(from, ref, from, outcome, reason)
	p := shutdownPayload{RequestID: id, Approve: boolp(approve), Reason: reason, By: "teammate"}
	if err := t.send(from, workspace.LeadName, TypeShutdownResponse, shutdownAnswerText(from, approve, reason), id, p); err != nil {
		return "", err
	}
	if !approve {
		return "You rejected the shutdown; keep working.", nil
	}
	t.mu.Lock()
	m.stopApproved = true
	stop := m.cycleCancel
	t.mu.Unlock()
	if stop != nil {
		stop() // the cycle ends once this answer is recorded
	}
	return "Shutdown approved: you stop at the end of this turn.", nil
}

// answerShutdownFor approves a shutdown on behalf of an idle teammate:
// its unread messages are taken into its conversation first, so none is
// lost, and it is shut down.
func (t *Team) answerShutdownFor(m *member, id string) {
	ref, ok := t.resolve(id, RequestShutdown, m.name, OutcomeApproved)
	if !ok {
		return
	}
	t.answered(m.name, ref, ByRuntime, OutcomeApproved, m.name+" was idle")
	// The answer is written before the teammate's inbox is emptied, so the
	// team never looks settled while the lead has yet to hear of it.
	p := shutdownPayload{RequestID: id, Approve: boolp(true), By: "runtime"}
	if err := t.send(m.name, workspace.LeadName, TypeShutdownResponse, shutdownIdleText(m.name), id, p); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "shutdown response: ", err)})
	}
	if _, err := m.agent.Absorb(); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "take inbox before shutdown: ", err)})
	}
	t.setStatusWhy(m, StatusShutdown, "approved a shutdown request (idle)", func(mb *Member) { mb.Activity, mb.Ended = "", true })
}

// forceShutdown stops a teammate that did not answer in time (the
// request table runs it when the deadline passes).
func (t *Team) forceShutdown(r request.Request) {
	m := t.expiredMember(r.To)
	if m == nil {
		return
	}
	id, ref := r.ID, refOf(r)
	m.cancel()
	<-m.done
	why := fmt.Sprintf("forced shutdown: no answer to the shutdown request within %s", t.opts.ShutdownTimeout)
	t.expired(m.name, ref, OutcomeForced, why)
	p := shutdownPayload{RequestID: id, Approve: boolp(true), Forced: true, By: "runtime"}
	if err := t.send(m.name, workspace.LeadName, TypeShutdownResponse, shutdownForcedText(m.name, t.opts.ShutdownTimeout), id, p); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "shutdown response: ", err)})
	}
	t.setStatusWhy(m, StatusShutdown, why, func(mb *Member) { mb.Activity, mb.Error, mb.Ended = "", why, true })
}

// WriteAllowed closes the write tools of a plan-mode teammate until its
// plan is approved (tools.WriteGate).
func (m *member) WriteAllowed() (bool, string) {
	if !m.planMode || m.planApproved.Load() {
		return true, ""
	}
	return false, "you are in plan mode: you may not change anything until the lead approves your plan (submit_plan, then wait for the answer)"
}

// SubmitPlan sends a plan-mode teammate's plan to the lead (tools.Protocols).
func (t *Team) SubmitPlan(ctx context.Context, from, plan string) (string, error) {
	m, err := t.member(from)
	if err != nil {
		return "", err
	}
	if !m.planMode {
		return "", fmt.Errorf("you are not in plan mode: no approval is needed, go ahead")
	}
	if m.planApproved.Load() {
		return "", fmt.Errorf("your plan is already approved: go ahead")
	}
	if id := t.openRequestFor(RequestPlanApproval, from); id != "" {
		return "", fmt.Errorf("your plan (request %s) still waits for the lead's review: end your turn and wait", id)
	}
	text := strings.TrimSpace(plan)
	ref, err := t.open(RequestRef{RequestKind: RequestPlanApproval, From: from, To: workspace.LeadName}, text, t.opts.PlanTimeout, t.expirePlan)
	if err != nil {
		return "", err
	}
	id := ref.ID
	if err := t.send(from, workspace.LeadName, TypePlanApprovalRequest, planRequestText(from, text, id), id, planPayload{RequestID: id, Plan: plan}); err != nil {
		if _, open := t.resolve(id, RequestPlanApproval, from, OutcomeFailed); open {
			t.answered(from, ref, ByRuntime, OutcomeFailed, "the plan could not be delivered: "+err.Error())
		}
		return "", err
	}
	t.setPlanState(m, PlanAwaitingApproval)
	return fmt.Sprintf("Plan submitted (request %s). End your turn now: the lead's answer arrives as a plan_approval_response message.", id), nil
}

// ReviewPlan approves or rejects a plan (tools.Protocols).
func (t *Team) ReviewPlan(ctx context.Context, from, id string, approve bool, feedback string) (string, error) {
	if from != workspace.LeadName && from != workspace.UserName {
		return "", fmt.Errorf("only the lead reviews plans")
	}
	r, ok := t.requests.Get(id)
	if !ok || r.Kind != RequestPlanApproval {
		return "", fmt.Errorf("there is no plan waiting for review with request id %q", id)
	}
	author := r.From
	m, err := t.member(author)
	if err != nil {
		return "", err
	}
	state, outcome := PlanApproved, OutcomeApproved
	if !approve {
		state, outcome = PlanRejected, OutcomeRejected
	}
	ref, ok := t.resolve(id, RequestPlanApproval, author, outcome)
	if !ok {
		return "", fmt.Errorf("the plan request %q was already answered", id)
	}
	m.planApproved.Store(approve)
	t.answered(author, ref, from, outcome, feedback)
	if err := t.send(from, author, TypePlanApprovalResponse, planReviewText(approve, feedback), id,
		planPayload{RequestID: id, Approve: boolp(approve), Feedback: feedback}); err != nil {
		return "", err
	}
	t.setPlanState(m, state)
	if approve {
		return fmt.Sprintf("Approved %s's plan; it may now change things.", author), nil
	}
	return fmt.Sprintf("Rejected %s's plan; it will revise and resubmit.", author), nil
}

// expirePlan answers a plan the lead did not review in time: the teammate
// stays read-only and is told to resubmit or ask.
func (t *Team) expirePlan(r request.Request) {
	m := t.expiredMember(r.From)
	if m == nil {
		return
	}
	id, ref := r.ID, refOf(r)
	fb := planExpiredFeedback(t.opts.PlanTimeout)
	t.expired(m.name, ref, OutcomeExpired, fb)
	if err := t.send(workspace.LeadName, m.name, TypePlanApprovalResponse, planExpiredText(fb), id,
		planPayload{RequestID: id, Approve: boolp(false), Feedback: fb}); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "plan timeout: ", err)})
	}
	t.setPlanState(m, PlanRejected)
}

func (t *Team) setPlanState(m *member, state PlanState) {
	if _, err := t.reg.Update(func(c *Config) error {
		i := c.Find(m.name)
		if i < 0 {
			return errNoChange
		}
		c.Teammates[i].PlanState = state
		c.Teammates[i].UpdatedAt = time.Now().UTC()
		return nil
	}); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassRegistry, "registry: ", err)})
	}
	t.events.Emit(Event{Agent: m.name, Payload: StatusChanged{Role: m.role, Status: t.statusOf(m), PlanState: state,
		Reason: "plan " + strings.ReplaceAll(string(state), "_", " ")}})
	t.notifyChanged()
}
