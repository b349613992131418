package protocol

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/request"
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

// Plans run plan approval: a plan-mode teammate may only read until the
// lead (or the person) approves the plan it submits; a plan not reviewed
// in time leaves it read-only, told to resubmit or ask.
type Plans struct {
	d       Deps
	rq      *Requests
	timeout time.Duration
	// byPerson holds the plans the person answered (id → approved): the
	// lead reads their requests as done, not as plans to review.
	byPerson sync.Map
}

// NewPlans is the plan approval of the team d describes; timeout bounds
// the wait for the lead's review.
func NewPlans(d Deps, timeout time.Duration) *Plans {
	return &Plans{d: d, rq: d.Requests, timeout: timeout}
}

// ByPerson reports whether the person answered plan request id, and how.
func (p *Plans) ByPerson(id string) (approved, ok bool) {
	v, ok := p.byPerson.Load(id)
	if !ok {
		return false, false
	}
	return v.(bool), true
}

// Submit sends a plan-mode teammate's plan to the lead.
func (p *Plans) Submit(ctx context.Context, from, plan string) (string, error) {
	m, err := p.d.Roster.Mate(ctx, from)
	if err != nil {
		return "", err
	}
	if !m.PlanMode() {
		return "", fmt.Errorf("you are not in plan mode: no approval is needed, go ahead")
	}
	if m.PlanApproved() {
		return "", fmt.Errorf("your plan is already approved: go ahead")
	}
	if id := p.rq.OpenFor(event.RequestPlanApproval, from); id != "" {
		return "", fmt.Errorf("your plan (request %s) still waits for the lead's review: end your turn and wait", id)
	}
	text := strings.TrimSpace(plan)
	ref, err := p.rq.Open(event.RequestRef{RequestKind: event.RequestPlanApproval, From: from, To: inbox.LeadName}, text, p.timeout, p.expire)
	if err != nil {
		return "", err
	}
	id := ref.ID
	// The registry says so before the lead is told: a lead that reviews at
	// once must not have its approval overwritten by this later write.
	p.setState(ctx, m.Name(), m.Role(), m.Status(), registry.PlanAwaitingApproval)
	msg := inbox.Message{Type: TypePlanApprovalRequest, From: from, To: inbox.LeadName, Content: planRequestText(from, text, id), CorrelationID: id}
	if err := p.rq.Send(ctx, msg, planPayload{RequestID: id, Plan: plan}); err != nil {
		if _, open := p.rq.Answer(id, event.RequestPlanApproval, from, event.OutcomeFailed); open {
			p.rq.Answered(from, ref, event.ByRuntime, event.OutcomeFailed, "the plan could not be delivered: "+err.Error())
		}
		// Put back even when ctx ended the send: the plan is a draft again.
		p.setState(context.WithoutCancel(ctx), m.Name(), m.Role(), m.Status(), registry.PlanDrafting)
		return "", err
	}
	return fmt.Sprintf("Plan submitted (request %s). End your turn now: the lead's answer arrives as a plan_approval_response message.", id), nil
}

// Review approves or rejects a plan, as the lead or the person.
func (p *Plans) Review(ctx context.Context, from, id string, approve bool, feedback string) (string, error) {
	if from != inbox.LeadName && from != inbox.UserName {
		return "", fmt.Errorf("only the lead reviews plans")
	}
	r, ok := p.rq.Get(id)
	if !ok || r.Kind != event.RequestPlanApproval {
		// A plan of a teammate run by another process (remote.go).
		if text, found, err := p.reviewRemote(ctx, from, id, approve, feedback); found || err != nil {
			return text, err
		}
		return "", fmt.Errorf("there is no plan waiting for review with request id %q", id)
	}
	author := r.From
	m, err := p.d.Roster.Mate(ctx, author)
	if err != nil {
		return "", err
	}
	state, outcome := registry.PlanApproved, event.OutcomeApproved
	if !approve {
		state, outcome = registry.PlanRejected, event.OutcomeRejected
	}
	ref, ok := p.rq.Answer(id, event.RequestPlanApproval, author, outcome)
	if !ok {
		return "", fmt.Errorf("the plan request %q was already answered", id)
	}
	m.SetPlanApproved(approve)
	if from == inbox.UserName {
		p.byPerson.Store(id, approve)
	}
	p.rq.Answered(author, ref, from, outcome, feedback)
	// The registry says so before the teammate is told: once told it may
	// finish and report before a later write would land.
	p.setState(ctx, m.Name(), m.Role(), m.Status(), state)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: from, To: author, Content: planReviewText(from, approve, feedback), CorrelationID: id}
	if err := p.rq.Send(ctx, msg, planPayload{RequestID: id, Approve: Bool(approve), Feedback: feedback}); err != nil {
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
func (p *Plans) expire(r request.Request) {
	m := p.d.Roster.Expired(r.From)
	if m == nil {
		return
	}
	id, ref := r.ID, RefOf(r)
	fb := planExpiredFeedback(p.timeout)
	p.rq.Expired(m.Name(), ref, event.OutcomeExpired, fb)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: inbox.LeadName, To: m.Name(), Content: planExpiredText(fb), CorrelationID: id}
	ctx := context.Background() // the request table's timer has no caller to cancel it
	if err := p.rq.Send(ctx, msg, planPayload{RequestID: id, Approve: Bool(false), Feedback: fb}); err != nil {
		p.d.Events.Emit(event.Event{Agent: m.Name(), Payload: p.d.Failure(event.ClassInbox, "plan timeout: ", err)})
	}
	p.setState(ctx, m.Name(), m.Role(), m.Status(), registry.PlanRejected)
}

// setState records where a teammate's plan is, in the registry and the log.
func (p *Plans) setState(ctx context.Context, name, role string, status registry.Status, state registry.PlanState) {
	if err := p.d.Registry.Change(ctx, func(c *registry.Config) error {
		i := c.Find(name)
		if i < 0 {
			return statefile.ErrNoChange
		}
		c.Teammates[i].PlanState = state
		c.Teammates[i].UpdatedAt = time.Now().UTC()
		return nil
	}); err != nil {
		p.d.Events.Emit(event.Event{Agent: name, Payload: p.d.Failure(event.ClassRegistry, "registry: ", err)})
	}
	p.d.Events.Emit(event.Event{Agent: name, Payload: event.StatusChanged{Role: role, Status: status, PlanState: state,
		Reason: "plan " + strings.ReplaceAll(string(state), "_", " ")}})
	p.d.Notify()
}

// Reopen opens again the plan a resumed teammate had submitted and the
// lead had not reviewed when the earlier process stopped, with a fresh deadline.
func (p *Plans) Reopen(name string, leadInbox, mateInbox []inbox.Message) {
	if id := Unanswered(leadInbox, mateInbox, TypePlanApprovalRequest, TypePlanApprovalResponse, name); id != "" {
		p.rq.Reopen(event.RequestRef{ID: id, RequestKind: event.RequestPlanApproval, From: name, To: inbox.LeadName}, p.timeout, p.expire)
	}
}
