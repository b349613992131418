package team

import (
	"context"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/request"
	"github.com/agentteam/agentteam/workspace"
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

// shutdowns runs the shutdown protocol: the lead (or the person) asks a
// teammate to stop; a working teammate answers, an idle one is answered
// for by its runtime, and one that does not answer in time is stopped.
type shutdowns struct {
	t       *Team // the teammates, their statuses
	rq      *protocol.Requests
	timeout time.Duration
}

// RequestShutdown asks a teammate to shut down (tools.Protocols).
func (t *Team) RequestShutdown(_ context.Context, from, name, reason string) (string, error) {
	return t.shutdowns.request(from, name, reason)
}

// RespondShutdown is a teammate's answer to a shutdown request (tools.Protocols).
func (t *Team) RespondShutdown(_ context.Context, from, id string, approve bool, reason string) (string, error) {
	return t.shutdowns.respond(from, id, approve, reason)
}

func (s *shutdowns) request(from, name, reason string) (string, error) {
	if from != workspace.LeadName && from != workspace.UserName {
		return "", fmt.Errorf("only the lead can ask a teammate to shut down")
	}
	m, err := s.t.roster.member(name)
	if err != nil {
		if mb, ok := s.t.remote(name); ok {
			return s.requestRemote(from, mb, reason) // remote.go
		}
		return "", err
	}
	if st := s.t.roster.statusOf(m); st == StatusShutdown || st == StatusFailed {
		return "", fmt.Errorf("%s is already %s", name, st)
	}
	if id := s.rq.OpenFor(RequestShutdown, name); id != "" {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	// Opened and told under rq.Hold: a teammate that finds it open
	// (answerIfAsked) answers after the request's message is told.
	defer s.rq.Hold()()
	ref, err := s.rq.Open(RequestRef{RequestKind: RequestShutdown, From: from, To: name}, reason, s.timeout, s.force)
	if err != nil {
		return "", err
	}
	id := ref.ID
	msg, err := protocol.WithPayload(inbox.Message{Type: TypeShutdownRequest, From: from, To: name, Content: shutdownRequestText(reason, id), CorrelationID: id},
		shutdownPayload{RequestID: id, Reason: reason})
	if err == nil {
		err = s.rq.SendHeld(msg)
	}
	if err != nil {
		if _, open := s.rq.Answer(id, RequestShutdown, name, OutcomeFailed); open {
			s.rq.Answered(name, ref, ByRuntime, OutcomeFailed, "the request could not be delivered: "+err.Error())
		}
		return "", err
	}
	return fmt.Sprintf("Asked %s to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, id, s.timeout), nil
}

func (s *shutdowns) respond(from, id string, approve bool, reason string) (string, error) {
	m, err := s.t.roster.member(from)
	if err != nil {
		return "", err
	}
	outcome := OutcomeApproved
	if !approve {
		outcome = OutcomeRejected
	}
	ref, ok := s.rq.Answer(id, RequestShutdown, from, outcome)
	if !ok && s.t.hosting != nil {
		s.adopt(m) // asked from another process (remote.go)
		ref, ok = s.rq.Answer(id, RequestShutdown, from, outcome)
	}
	if !ok {
		return "", fmt.Errorf("there is no open shutdown request %q for you", id)
	}
	s.rq.Answered(from, ref, from, outcome, reason)
	p := shutdownPayload{RequestID: id, Approve: protocol.Bool(approve), Reason: reason, By: "teammate"}
	if err := s.rq.Send(s.response(from, shutdownAnswerText(from, approve, reason), id), p); err != nil {
		return "", err
	}
	if !approve {
		return "You rejected the shutdown; keep working.", nil
	}
	s.t.roster.mu.Lock()
	m.stopApproved = true
	stop := m.cycleCancel
	s.t.roster.mu.Unlock()
	if stop != nil {
		stop() // the cycle ends once this answer is recorded
	}
	return "Shutdown approved: you stop at the end of this turn.", nil
}

// response is a shutdown_response from a teammate to the lead.
func (s *shutdowns) response(from, content, id string) inbox.Message {
	return inbox.Message{Type: TypeShutdownResponse, From: from, To: workspace.LeadName, Content: content, CorrelationID: id}
}

// answerIfAsked approves, for a teammate between cycles (idle), a
// shutdown it was asked: its unread messages are taken into its
// conversation first, so none is lost, and it is shut down. It reports
// whether the teammate stops.
func (s *shutdowns) answerIfAsked(m *member) bool {
	if s.t.hosting != nil { // requests asked from another process (remote.go)
		s.adopt(m)
		if m.planFromRegistry != nil && m.planMode && !m.planApproved.Load() {
			m.planFromRegistry()
		}
	}
	release := s.rq.Hold() // the request is told before it is answered
	id := s.rq.OpenFor(RequestShutdown, m.name)
	release()
	if id == "" {
		return false
	}
	ref, ok := s.rq.Answer(id, RequestShutdown, m.name, OutcomeApproved)
	if !ok {
		return true // answered meanwhile, or forced: either way it stops
	}
	t := s.t
	s.rq.Answered(m.name, ref, ByRuntime, OutcomeApproved, m.name+" was idle")
	// The answer is written before the teammate's inbox is emptied, so the
	// team never looks settled while the lead has yet to hear of it.
	p := shutdownPayload{RequestID: id, Approve: protocol.Bool(true), By: "runtime"}
	if err := s.rq.Send(s.response(m.name, shutdownIdleText(m.name), id), p); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "shutdown response: ", err)})
	}
	if _, err := m.agent.Absorb(); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "take inbox before shutdown: ", err)})
	}
	t.roster.setStatusWhy(m, StatusShutdown, "approved a shutdown request (idle)", func(mb *Member) { mb.Activity, mb.Ended = "", true })
	return true
}

// force stops a teammate that did not answer in time (the request table
// runs it when the deadline passes).
func (s *shutdowns) force(r request.Request) {
	t := s.t
	m := t.roster.expiredMember(r.To)
	if m == nil {
		return
	}
	id, ref := r.ID, protocol.RefOf(r)
	m.cancel()
	<-m.done
	why := fmt.Sprintf("forced shutdown: no answer to the shutdown request within %s", s.timeout)
	s.rq.Expired(m.name, ref, OutcomeForced, why)
	p := shutdownPayload{RequestID: id, Approve: protocol.Bool(true), Forced: true, By: "runtime"}
	if err := s.rq.Send(s.response(m.name, shutdownForcedText(m.name, s.timeout), id), p); err != nil {
		t.events.Emit(Event{Agent: m.name, Payload: failure(ClassInbox, "shutdown response: ", err)})
	}
	t.roster.setStatusWhy(m, StatusShutdown, why, func(mb *Member) { mb.Activity, mb.Error, mb.Ended = "", why, true })
}

// reopen opens again the shutdown a resumed teammate was asked and had
// not answered when the earlier process stopped, with a fresh deadline.
func (s *shutdowns) reopen(name string, leadInbox, mateInbox []inbox.Message) {
	if id := protocol.Unanswered(mateInbox, leadInbox, TypeShutdownRequest, TypeShutdownResponse, workspace.LeadName); id != "" {
		s.rq.Reopen(RequestRef{ID: id, RequestKind: RequestShutdown, From: workspace.LeadName, To: name}, s.timeout, s.force)
	}
}
