package team

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/workspace"
)

// Protocol message types (SPEC §6): each reply's correlation_id is its
// request's id, which the request also carries as payload.request_id.
const (
	TypeShutdownRequest      = "shutdown_request"
	TypeShutdownResponse     = "shutdown_response"
	TypePlanApprovalRequest  = "plan_approval_request"
	TypePlanApprovalResponse = "plan_approval_response"
)

// Plan states of a plan-mode teammate, shown in the registry.
const (
	PlanDrafting         = "drafting"
	PlanAwaitingApproval = "awaiting_approval"
	PlanApproved         = "approved"
	PlanRejected         = "rejected"
)

// Default protocol timeouts.
const (
	DefaultShutdownTimeout = 60 * time.Second
	DefaultPlanTimeout     = 15 * time.Minute
)

// request is a protocol request waiting for its answer.
type request struct {
	id, kind string
	teammate string
	timer    *time.Timer
}

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
func newRequestID(kind string) string {
	prefix, _, _ := strings.Cut(kind, "_")
	return prefix + "-" + uuid.NewString()[:8]
}

// open registers a request and arms its timeout.
func (t *Team) open(kind, teammate string, timeout time.Duration, onTimeout func(id string)) *request {
	return t.reopen(newRequestID(kind), kind, teammate, timeout, onTimeout)
}

// reopen registers a request under a known id (a resumed team's).
func (t *Team) reopen(id, kind, teammate string, timeout time.Duration, onTimeout func(id string)) *request {
	r := &request{id: id, kind: kind, teammate: teammate}
	t.mu.Lock()
	t.requests[r.id] = r
	r.timer = time.AfterFunc(timeout, func() {
		if t.ctx.Err() == nil {
			onTimeout(r.id)
		}
	})
	t.mu.Unlock()
	return r
}

// resolve closes a request; it reports false if it was already closed
// (answered, timed out) or is not of that kind and teammate.
func (t *Team) resolve(id, kind, teammate string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.requests[id]
	if !ok || r.kind != kind || (teammate != "" && r.teammate != teammate) {
		return false
	}
	r.timer.Stop()
	delete(t.requests, id)
	return true
}

// expire closes a request whose time ran out and returns its teammate, or
// nil if it was answered meanwhile (or its teammate is not run here).
func (t *Team) expire(id, kind string) *member {
	t.mu.Lock()
	r, ok := t.requests[id]
	t.mu.Unlock()
	if !ok || !t.resolve(id, kind, r.teammate) {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.members[r.teammate]
}

// openRequestFor returns the id of a teammate's open request of a kind.
func (t *Team) openRequestFor(kind, teammate string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, r := range t.requests {
		if r.kind == kind && r.teammate == teammate {
			return id
		}
	}
	return ""
}

// send delivers a protocol message with its correlation id and payload.
func (t *Team) send(from, to, typ, content, correlation string, payload any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	m, err := t.store.Append(to, inbox.Message{Type: typ, From: from, To: to, Content: content, CorrelationID: correlation, Payload: raw})
	if err != nil {
		return err
	}
	t.events.Emit(Event{Kind: EventMessage, From: from, To: to, Type: typ, MessageID: m.ID, Detail: content})
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

func (t *Team) statusOf(m *member) string {
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
	if id := t.openRequestFor(TypeShutdownRequest, name); id != "" {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	timeout := t.opts.ShutdownTimeout
	r := t.open(TypeShutdownRequest, name, timeout, t.forceShutdown)
	content := fmt.Sprintf("The lead asks you to shut down: %s\nAnswer with respond_shutdown(request_id=%q, approve=true) to stop at the end of this turn, "+
		"or approve=false with a reason to keep working. If you end your turn without answering, the shutdown is approved for you.", reason, r.id)
	if err := t.send(from, name, TypeShutdownRequest, content, r.id, shutdownPayload{RequestID: r.id, Reason: reason}); err != nil {
		t.resolve(r.id, TypeShutdownRequest, name)
		return "", err
	}
	return fmt.Sprintf("Asked %s to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, r.id, timeout), nil
}

// RespondShutdown is a teammate's answer to a shutdown request (tools.Protocols).
func (t *Team) RespondShutdown(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	m, err := t.member(from)
	if err != nil {
		return "", err
	}
	if !t.resolve(id, TypeShutdownRequest, from) {
		return "", fmt.Errorf("there is no open shutdown request %q for you", id)
	}
	p := shutdownPayload{RequestID: id, Approve: boolp(approve), Reason: reason, By: "teammate"}
	content := fmt.Sprintf("%s approved the shutdown request.", from)
	if !approve {
		content = fmt.Sprintf("%s rejected the shutdown request: %s", from, reason)
	}
	if err := t.send(from, workspace.LeadName, TypeShutdownResponse, content, id, p); err != nil {
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
	if !t.resolve(id, TypeShutdownRequest, m.name) {
		return
	}
	// The answer is written before the teammate's inbox is emptied, so the
	// team never looks settled while the lead has yet to hear of it.
	p := shutdownPayload{RequestID: id, Approve: boolp(true), By: "runtime"}
	if err := t.send(m.name, workspace.LeadName, TypeShutdownResponse,
		fmt.Sprintf("%s was idle, so the runtime approved the shutdown for it.", m.name), id, p); err != nil {
		t.events.Emit(Event{Kind: EventError, Agent: m.name, Detail: "shutdown response: " + err.Error(), IsError: true})
	}
	if _, err := m.agent.Absorb(); err != nil {
		t.events.Emit(Event{Kind: EventError, Agent: m.name, Detail: "take inbox before shutdown: " + err.Error(), IsError: true})
	}
	t.setStatusWhy(m, StatusShutdown, "approved a shutdown request (idle)", func(mb *Member) { mb.Activity, mb.Ended = "", true })
}

// forceShutdown stops a teammate that did not answer in time.
func (t *Team) forceShutdown(id string) {
	m := t.expire(id, TypeShutdownRequest)
	if m == nil {
		return
	}
	m.cancel()
	<-m.done
	why := fmt.Sprintf("forced shutdown: no answer to the shutdown request within %s", t.opts.ShutdownTimeout)
	p := shutdownPayload{RequestID: id, Approve: boolp(true), Forced: true, By: "runtime"}
	if err := t.send(m.name, workspace.LeadName, TypeShutdownResponse,
		fmt.Sprintf("%s did not answer within %s and was shut down by force.", m.name, t.opts.ShutdownTimeout), id, p); err != nil {
		t.events.Emit(Event{Kind: EventError, Agent: m.name, Detail: "shutdown response: " + err.Error(), IsError: true})
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
	if id := t.openRequestFor(TypePlanApprovalRequest, from); id != "" {
		return "", fmt.Errorf("your plan (request %s) still waits for the lead's review: end your turn and wait", id)
	}
	r := t.open(TypePlanApprovalRequest, from, t.opts.PlanTimeout, t.expirePlan)
	content := fmt.Sprintf("%s asks you to approve its plan (request %s):\n\n%s\n\nAnswer with review_plan(request_id=%q, approve=true or false, feedback=...).",
		from, r.id, strings.TrimSpace(plan), r.id)
	if err := t.send(from, workspace.LeadName, TypePlanApprovalRequest, content, r.id, planPayload{RequestID: r.id, Plan: plan}); err != nil {
		t.resolve(r.id, TypePlanApprovalRequest, from)
		return "", err
	}
	t.setPlanState(m, PlanAwaitingApproval)
	return fmt.Sprintf("Plan submitted (request %s). End your turn now: the lead's answer arrives as a plan_approval_response message.", r.id), nil
}

// ReviewPlan approves or rejects a plan (tools.Protocols).
func (t *Team) ReviewPlan(ctx context.Context, from, id string, approve bool, feedback string) (string, error) {
	if from != workspace.LeadName && from != workspace.UserName {
		return "", fmt.Errorf("only the lead reviews plans")
	}
	t.mu.Lock()
	r, ok := t.requests[id]
	t.mu.Unlock()
	if !ok || r.kind != TypePlanApprovalRequest {
		return "", fmt.Errorf("there is no plan waiting for review with request id %q", id)
	}
	m, err := t.member(r.teammate)
	if err != nil {
		return "", err
	}
	if !t.resolve(id, TypePlanApprovalRequest, r.teammate) {
		return "", fmt.Errorf("the plan request %q was already answered", id)
	}
	m.planApproved.Store(approve)
	content := "The lead approved your plan: you may now change files and run any command."
	state := PlanApproved
	if !approve {
		content = "The lead rejected your plan. Revise it and submit_plan again."
		state = PlanRejected
	}
	if feedback != "" {
		content += "\nFeedback: " + feedback
	}
	if err := t.send(from, r.teammate, TypePlanApprovalResponse, content, id,
		planPayload{RequestID: id, Approve: boolp(approve), Feedback: feedback}); err != nil {
		return "", err
	}
	t.setPlanState(m, state)
	if approve {
		return fmt.Sprintf("Approved %s's plan; it may now change things.", r.teammate), nil
	}
	return fmt.Sprintf("Rejected %s's plan; it will revise and resubmit.", r.teammate), nil
}

// expirePlan answers a plan the lead did not review in time: the teammate
// stays read-only and is told to resubmit or ask.
func (t *Team) expirePlan(id string) {
	m := t.expire(id, TypePlanApprovalRequest)
	if m == nil {
		return
	}
	fb := fmt.Sprintf("the lead did not review your plan within %s; you are still read-only: message the lead or submit the plan again", t.opts.PlanTimeout)
	if err := t.send(workspace.LeadName, m.name, TypePlanApprovalResponse, "No review: "+fb, id,
		planPayload{RequestID: id, Approve: boolp(false), Feedback: fb}); err != nil {
		t.events.Emit(Event{Kind: EventError, Agent: m.name, Detail: "plan timeout: " + err.Error(), IsError: true})
	}
	t.setPlanState(m, PlanRejected)
}

func (t *Team) setPlanState(m *member, state string) {
	if _, err := t.reg.Update(func(c *Config) error {
		i := c.Find(m.name)
		if i < 0 {
			return errNoChange
		}
		c.Teammates[i].PlanState = state
		c.Teammates[i].UpdatedAt = time.Now().UTC()
		return nil
	}); err != nil {
		t.events.Emit(Event{Kind: EventError, Agent: m.name, Detail: "registry: " + err.Error(), IsError: true})
	}
	t.events.Emit(Event{Kind: EventStatus, Agent: m.name, Status: t.statusOf(m), Detail: "plan " + strings.ReplaceAll(state, "_", " ")})
	t.notifyChanged()
}
