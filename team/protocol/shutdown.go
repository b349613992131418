package protocol

import (
	"context"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/request"
)

// Shutdown message types.
const (
	TypeShutdownRequest  inbox.MessageType = "shutdown_request"
	TypeShutdownResponse inbox.MessageType = "shutdown_response"
)

// DefaultShutdownTimeout bounds the wait for a teammate's answer to a
// shutdown request; then it is shut down by force.
const DefaultShutdownTimeout = 60 * time.Second

// shutdownPayload is the payload of shutdown_request and shutdown_response.
type shutdownPayload struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Forced    bool   `json:"forced,omitempty"`
	// By says who answered: the teammate, or the runtime for it.
	By string `json:"by,omitempty"`
}

// Shutdowns run the shutdown protocol: the lead (or the person) asks a
// teammate to stop; a working teammate answers, an idle one is answered
// for by its runtime, and one that does not answer in time is stopped.
type Shutdowns struct {
	d       Deps
	rq      *Requests
	timeout time.Duration
}

// NewShutdowns is the shutdown protocol of the team d describes; timeout
// bounds the wait for a teammate's answer.
func NewShutdowns(d Deps, timeout time.Duration) *Shutdowns {
	return &Shutdowns{d: d, rq: d.Requests, timeout: timeout}
}

// Request asks a teammate, from the lead or the person, to shut down; one
// run elsewhere is asked through the inboxes (remote.go).
func (s *Shutdowns) Request(ctx context.Context, from, name, reason string) (string, error) {
	if from != inbox.LeadName && from != inbox.UserName {
		return "", fmt.Errorf("only the lead can ask a teammate to shut down")
	}
	m, err := s.d.Roster.Mate(ctx, name)
	if err != nil {
		if mb, ok := s.d.Roster.Remote(ctx, name); ok {
			return s.RequestRemote(ctx, from, mb, reason) // remote.go
		}
		return "", err
	}
	if st := m.Status(); st == registry.StatusShutdown || st == registry.StatusFailed {
		return "", fmt.Errorf("%s is already %s", name, st)
	}
	if id := s.rq.OpenFor(event.RequestShutdown, name); id != "" {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	// Opened and told under rq.Hold: a teammate that finds it open
	// (answerIfAsked) answers after the request's message is told.
	defer s.rq.Hold()()
	ref, err := s.rq.Open(event.RequestRef{RequestKind: event.RequestShutdown, From: from, To: name}, reason, s.timeout, s.force)
	if err != nil {
		return "", err
	}
	id := ref.ID
	msg, err := WithPayload(inbox.Message{Type: TypeShutdownRequest, From: from, To: name, Content: shutdownRequestText(reason, id), CorrelationID: id},
		shutdownPayload{RequestID: id, Reason: reason})
	if err == nil {
		err = s.rq.SendHeld(ctx, msg)
	}
	if err != nil {
		if _, open := s.rq.Answer(id, event.RequestShutdown, name, event.OutcomeFailed); open {
			s.rq.Answered(name, ref, event.ByRuntime, event.OutcomeFailed, "the request could not be delivered: "+err.Error())
		}
		return "", err
	}
	return fmt.Sprintf("Asked %s to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, id, s.timeout), nil
}

// Respond is a teammate's answer to the shutdown it was asked.
func (s *Shutdowns) Respond(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	m, err := s.d.Roster.Mate(ctx, from)
	if err != nil {
		return "", err
	}
	outcome := event.OutcomeApproved
	if !approve {
		outcome = event.OutcomeRejected
	}
	ref, ok := s.rq.Answer(id, event.RequestShutdown, from, outcome)
	if !ok && s.d.Across {
		s.adopt(ctx, m) // asked from another process (remote.go)
		ref, ok = s.rq.Answer(id, event.RequestShutdown, from, outcome)
	}
	if !ok {
		return "", fmt.Errorf("there is no open shutdown request %q for you", id)
	}
	s.rq.Answered(from, ref, from, outcome, reason)
	p := shutdownPayload{RequestID: id, Approve: Bool(approve), Reason: reason, By: "teammate"}
	if err := s.rq.Send(ctx, s.response(from, shutdownAnswerText(from, approve, reason), id), p); err != nil {
		return "", err
	}
	if !approve {
		return "You rejected the shutdown; keep working.", nil
	}
	m.ApproveStop() // the cycle ends once this answer is recorded
	return "Shutdown approved: you stop at the end of this turn.", nil
}

// response is a shutdown_response from a teammate to the lead.
func (s *Shutdowns) response(from, content, id string) inbox.Message {
	return inbox.Message{Type: TypeShutdownResponse, From: from, To: inbox.LeadName, Content: content, CorrelationID: id}
}

// AnswerIfAsked approves, for a teammate between cycles (idle), a
// shutdown it was asked: its unread messages are taken into its
// conversation first, so none is lost, and it is shut down. It reports
// whether the teammate stops.
func (s *Shutdowns) AnswerIfAsked(ctx context.Context, m Mate) bool {
	if s.d.Across { // requests asked from another process (remote.go)
		s.adopt(ctx, m)
		if m.PlanMode() && !m.PlanApproved() {
			m.RefreshPlan()
		}
	}
	release := s.rq.Hold() // the request is told before it is answered
	id := s.rq.OpenFor(event.RequestShutdown, m.Name())
	release()
	if id == "" {
		return false
	}
	ref, ok := s.rq.Answer(id, event.RequestShutdown, m.Name(), event.OutcomeApproved)
	if !ok {
		return true // answered meanwhile, or forced: either way it stops
	}
	s.rq.Answered(m.Name(), ref, event.ByRuntime, event.OutcomeApproved, m.Name()+" was idle")
	// The answer is written before the teammate's inbox is emptied, so the
	// team never looks settled while the lead has yet to hear of it.
	p := shutdownPayload{RequestID: id, Approve: Bool(true), By: "runtime"}
	if err := s.rq.Send(ctx, s.response(m.Name(), shutdownIdleText(m.Name()), id), p); err != nil {
		s.d.Events.Emit(event.Event{Agent: m.Name(), Payload: s.d.Failure(event.ClassInbox, "shutdown response: ", err)})
	}
	if err := m.Absorb(); err != nil {
		s.d.Events.Emit(event.Event{Agent: m.Name(), Payload: s.d.Failure(event.ClassInbox, "take inbox before shutdown: ", err)})
	}
	m.ShutDown("approved a shutdown request (idle)", false)
	return true
}

// force stops a teammate that did not answer in time (the request table
// runs it when the deadline passes).
func (s *Shutdowns) force(r request.Request) {
	m := s.d.Roster.Expired(r.To)
	if m == nil {
		return
	}
	id, ref := r.ID, RefOf(r)
	m.Stop()
	why := fmt.Sprintf("forced shutdown: no answer to the shutdown request within %s", s.timeout)
	s.rq.Expired(m.Name(), ref, event.OutcomeForced, why)
	p := shutdownPayload{RequestID: id, Approve: Bool(true), Forced: true, By: "runtime"}
	ctx := context.Background() // the request table's timer has no caller to cancel it
	if err := s.rq.Send(ctx, s.response(m.Name(), shutdownForcedText(m.Name(), s.timeout), id), p); err != nil {
		s.d.Events.Emit(event.Event{Agent: m.Name(), Payload: s.d.Failure(event.ClassInbox, "shutdown response: ", err)})
	}
	m.ShutDown(why, true)
}

// Reopen opens again the shutdown a resumed teammate was asked and had
// not answered when the earlier process stopped, with a fresh deadline.
func (s *Shutdowns) Reopen(name string, leadInbox, mateInbox []inbox.Message) {
	if id := Unanswered(mateInbox, leadInbox, TypeShutdownRequest, TypeShutdownResponse, inbox.LeadName); id != "" {
		s.rq.Reopen(event.RequestRef{ID: id, RequestKind: event.RequestShutdown, From: inbox.LeadName, To: name}, s.timeout, s.force)
	}
}
