package team

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/request"
	"github.com/agentteam/agentteam/workspace"
)

// Plan approval message types.
const (
	TypePlanApprovalRequest  inbox.MessageType = "plan_approval_request"
	TypePlanApprovalResponse inbox.MessageType = "plan_approval_response"
)

// DefaultPlanTimeout bounds the wait for the lead's review of a plan.
const DefaultPlanTimeout = 15 * time.Minute

// planPayload is the payload of plan_approval_request and _response.
type planPayload struct {
	RequestID string `json:"request_id"`
	Plan      string `json:"plan,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
}

// plans runs plan approval: a plan-mode teammate may only read until the
// lead (or the person) approves the plan it submits; a plan not reviewed
// in time leaves it read-only, told to resubmit or ask.
type plans struct {
	t       *Team // the teammates, the registry
	rq      *protocol.Requests
	timeout time.Duration
	// byPerson holds the plans the person answered (id → approved): the
	// lead reads their requests as done, not as plans to review.
	byPerson sync.Map
}

// WriteAllowed closes the write tools of a plan-mode teammate until its
// plan is approved (tools.WriteGate).
func (m *member) WriteAllowed() (bool, string) {
	if !m.planMode || m.planApproved.Load() {
		return true, ""
	}
	if m.planFromRegistry != nil && m.planFromRegistry() {
		return true, ""
	}
	return false, "you are in plan mode: you may not change anything until the lead approves your plan (submit_plan, then wait for the answer)"
}

// SubmitPlan sends a plan-mode teammate's plan to the lead (tools.Protocols).
func (t *Team) SubmitPlan(_ context.Context, from, plan string) (string, error) {
	return t.plans.submit(from, plan)
}

// ReviewPlan approves or rejects a plan (tools.Protocols).
func (t *Team) ReviewPlan(_ context.Context, from, id string, approve bool, feedback string) (string, error) {
	return t.plans.review(from, id, approve, feedback)
}

func (p *plans) submit(from, plan string) (string, error) {
	m, err := p.t.roster.member(from)
	if err != nil {
		return "", err
	}
	if !m.planMode {
		return "", fmt.Errorf("you are not in plan mode: no approval is needed, go ahead")
	}
	if m.planApproved.Load() {
		return "", fmt.Errorf("your plan is already approved: go ahead")
	}
	if id := p.rq.OpenFor(RequestPlanApproval, from); id != "" {
		return "", fmt.Errorf("your plan (request %s) still waits for the lead's review: end your turn and wait", id)
	}
	text := strings.TrimSpace(plan)
	ref, err := p.rq.Open(RequestRef{RequestKind: RequestPlanApproval, From: from, To: workspace.LeadName}, text, p.timeout, p.expire)
	if err != nil {
		return "", err
	}
	id := ref.ID
	// The registry says so before the lead is told: a lead that reviews at
	// once must not have its approval overwritten by this later write.
	p.setState(m, PlanAwaitingApproval)
	msg := inbox.Message{Type: TypePlanApprovalRequest, From: from, To: workspace.LeadName, Content: planRequestText(from, text, id), CorrelationID: id}
	if err := p.rq.Send(msg, planPayload{RequestID: id, Plan: plan}); err != nil {
		if _, open := p.rq.Answer(id, RequestPlanApproval, from, OutcomeFailed); open {
			p.rq.Answered(from, ref, ByRuntime, OutcomeFailed, "the plan could not be delivered: "+err.Error())
		}
		p.setState(m, PlanDrafting)
		return "", err
	}
	return fmt.Sprintf("Plan submitted (request %s). End your turn now: the lead's answer arrives as a plan_approval_response message.", id), nil
}

func (p *plans) review(from, id string, approve bool, feedback string) (string, error) {
	if from != workspace.LeadName && from != workspace.UserName {
		return "", fmt.Errorf("only the lead reviews plans")
	}
	r, ok := p.rq.Get(id)
	if !ok || r.Kind != RequestPlanApproval {
		// A plan of a teammate run by another process (remote.go).
		if text, found, err := p.reviewRemote(from, id, approve, feedback); found || err != nil {
			return text, err
		}
		return "", fmt.Errorf("there is no plan waiting for review with request id %q", id)
	}
	author := r.From
	m, err := p.t.roster.member(author)
	if err != nil {
		return "", err
	}
	state, outcome := PlanApproved, OutcomeApproved
	if !approve {
		state, outcome = PlanRejected, OutcomeRejected
	}
	ref, ok := p.rq.Answer(id, RequestPlanApproval, author, outcome)
	if !ok {
		return "", fmt.Errorf("the plan request %q was already answered", id)
	}
	m.planApproved.Store(approve)
	if from == workspace.UserName {
		p.byPerson.Store(id, approve)
	}
	p.rq.Answered(author, ref, from, outcome, feedback)
	// The registry says so before the teammate is told: once told it may
	// finish and report before a later write would land.
	p.setState(m, state)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: from, To: author, Content: planReviewText(from, approve, feedback), CorrelationID: id}
	if err := p.rq.Send(msg, planPayload{RequestID: id, Approve: protocol.Bool(approve), Feedback: feedback}); err != nil {
		return "", err
	}
	if approve {
		return fmt.Sprintf("Approved %s's plan; it may now change things.", author), nil
	}
	return fmt.Sprintf("Rejected %s's plan; it will revise and resubmit.", author), nil
}

// expire answers a plan the lead did not review in time (the request
// table runs it when the deadline passes): the teammate stays read-only
// and is told to resubmit or ask.
func (p *plans) expire(r request.Request) {
	m := p.t.roster.expiredMember(r.From)
	if m == nil {
		return
	}
	id, ref := r.ID, protocol.RefOf(r)
	fb := planExpiredFeedback(p.timeout)
	p.rq.Expired(m.name, ref, OutcomeExpired, fb)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: workspace.LeadName, To: m.name, Content: planExpiredText(fb), CorrelationID: id}
	if err := p.rq.Send(msg, planPayload{RequestID: id, Approve: protocol.Bool(false), Feedback: fb}); err != nil {
		p.t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "plan timeout: ", err)})
	}
	p.setState(m, PlanRejected)
}

// setState records where a teammate's plan is, in the registry and the log.
func (p *plans) setState(m *member, state PlanState) {
	t := p.t
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
	t.events.Emit(Event{Agent: m.name, Payload: StatusChanged{Role: m.role, Status: t.roster.statusOf(m), PlanState: state,
		Reason: "plan " + strings.ReplaceAll(string(state), "_", " ")}})
	t.notifyChanged()
}

// reopen opens again the plan a resumed teammate had submitted and the
// lead had not reviewed when the earlier process stopped, with a fresh deadline.
func (p *plans) reopen(name string, leadInbox, mateInbox []inbox.Message) {
	if id := protocol.Unanswered(leadInbox, mateInbox, TypePlanApprovalRequest, TypePlanApprovalResponse, name); id != "" {
		p.rq.Reopen(RequestRef{ID: id, RequestKind: RequestPlanApproval, From: name, To: workspace.LeadName}, p.timeout, p.expire)
	}
}
