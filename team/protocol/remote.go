package protocol

import (
	"context"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// The protocols with a teammate another process runs (a team across
// hosts, team/hosts). A request's table lives in the process that runs the
// teammate, so the lead's process only logs a request it sends and
// delivers it; the teammate's process adopts it from the inboxes, with its
// deadline counted from then, and answers, forces or expires it there.
// Plan approval goes the other way: the lead finds the plan in its inbox,
// records its review in the registry (registry.PlanState), and the teammate's
// process takes it from there.

// RequestRemote asks a teammate run elsewhere to shut down.
func (s *Shutdowns) RequestRemote(ctx context.Context, from string, mb registry.Member, reason string) (string, error) {
	name := mb.Name
	switch mb.Status {
	case registry.StatusShutdown, registry.StatusFailed:
		return "", fmt.Errorf("%s is already %s", name, mb.Status)
	}
	if mb.Status == registry.StatusQueued && mb.Worker == "" {
		s.d.Roster.CancelQueued(ctx, mb, reason)
		if m, ok := s.d.Roster.Remote(ctx, name); ok && m.Status == registry.StatusShutdown {
			return fmt.Sprintf("%s had not started yet: it is shut down.", name), nil
		}
	}
	// Asked before and not answered: the teammate's inbox, and the lead's
	// read on from where this process left it (inbox.Indexes), never whole.
	id, err := s.d.Indexes.UnansweredIn(ctx, name, inbox.LeadName, TypeShutdownRequest, TypeShutdownResponse, inbox.LeadName)
	if err != nil {
		return "", err
	}
	if id != "" && from == inbox.LeadName {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	ref := event.RequestRef{ID: NewID(event.RequestShutdown), RequestKind: event.RequestShutdown, From: from, To: name}
	s.d.Events.Emit(event.Event{Agent: name, Payload: event.RequestOpened{RequestRef: ref, Deadline: time.Now().UTC().Add(s.timeout), Text: reason}})
	msg := inbox.Message{Type: TypeShutdownRequest, From: from, To: name, Content: shutdownRequestText(reason, ref.ID), CorrelationID: ref.ID}
	if err := s.rq.Send(ctx, msg, shutdownPayload{RequestID: ref.ID, Reason: reason}); err != nil {
		s.rq.Answered(name, ref, event.ByRuntime, event.OutcomeFailed, "the request could not be delivered: "+err.Error())
		return "", err
	}
	return fmt.Sprintf("Asked %s (on worker %s) to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, mb.Worker, ref.ID, s.timeout), nil
}

// adopt opens in this process's table the shutdown a teammate it runs
// was asked from another process and has not answered. It runs at every
// idle point of every teammate: the teammate's inbox is read on from the
// last look, and the lead's only while a request there is not known
// answered (inbox.Indexes).
func (s *Shutdowns) adopt(ctx context.Context, m Mate) {
	if !s.d.Across || s.rq.OpenFor(event.RequestShutdown, m.Name()) != "" {
		return
	}
	id, err := s.d.Indexes.UnansweredIn(ctx, m.Name(), inbox.LeadName, TypeShutdownRequest, TypeShutdownResponse, inbox.LeadName)
	if err != nil || id == "" {
		return
	}
	s.rq.Reopen(event.RequestRef{ID: id, RequestKind: event.RequestShutdown, From: inbox.LeadName, To: m.Name()}, s.timeout, s.force)
}

// reviewRemote reviews a plan whose request is not in this process's
// table: one a teammate run elsewhere sent to the lead's inbox and nobody
// has answered. ok is false when there is no such plan.
func (p *Plans) reviewRemote(ctx context.Context, from, id string, approve bool, feedback string) (string, bool, error) {
	if !p.d.Across {
		return "", false, nil
	}
	lead, err := p.d.Indexes.Read(ctx, inbox.LeadName)
	if err != nil {
		return "", false, err
	}
	asked, ok := lead.Find(id, func(m inbox.Message) bool { return m.Type == TypePlanApprovalRequest })
	if !ok {
		return "", false, nil
	}
	author := asked.From
	mb, ok := p.d.Roster.Remote(ctx, author)
	if !ok {
		return "", false, nil
	}
	mate, err := p.d.Indexes.Read(ctx, author)
	if err != nil {
		return "", false, err
	}
	if mate.Has(id, TypePlanApprovalResponse) {
		return "", true, fmt.Errorf("the plan request %q was already answered", id)
	}
	state, outcome := registry.PlanApproved, event.OutcomeApproved
	if !approve {
		state, outcome = registry.PlanRejected, event.OutcomeRejected
	}
	ref := event.RequestRef{ID: id, RequestKind: event.RequestPlanApproval, From: author, To: inbox.LeadName}
	p.rq.Answered(author, ref, from, outcome, feedback)
	// The registry says so before the teammate is told: its process reads it there.
	p.setState(ctx, author, mb.Role, mb.Status, state)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: from, To: author, Content: planReviewText(from, approve, feedback), CorrelationID: id}
	if err := p.rq.Send(ctx, msg, planPayload{RequestID: id, Approve: Bool(approve), Feedback: feedback}); err != nil {
		return "", true, err
	}
	if approve {
		return fmt.Sprintf("Approved %s's plan; it may now change things.", author), true, nil
	}
	return fmt.Sprintf("Rejected %s's plan; it will revise and resubmit.", author), true, nil
}

// ApprovedElsewhere reports, for a plan-mode teammate this process runs,
// whether the lead's process recorded its plan approved in the registry;
// a review found there closes the plan's request here.
func (p *Plans) ApprovedElsewhere(ctx context.Context, m Mate) bool {
	c, err := p.d.Registry.Read(ctx)
	if err != nil {
		return false
	}
	i := c.Find(m.Name())
	if i < 0 {
		return false
	}
	state := c.Teammates[i].PlanState
	if state != registry.PlanApproved && state != registry.PlanRejected {
		return false
	}
	if id := p.rq.OpenFor(event.RequestPlanApproval, m.Name()); id != "" {
		o := event.OutcomeApproved
		if state == registry.PlanRejected {
			o = event.OutcomeRejected
		}
		p.rq.Answer(id, event.RequestPlanApproval, m.Name(), o) // the lead's process logged the answer
	}
	if state == registry.PlanApproved {
		m.SetPlanApproved(true)
		return true
	}
	return false
}
