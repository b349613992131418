package team

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/pool"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/workspace"
)

// The protocols with a teammate another process runs (a team across
// hosts, worker.go). A request's table lives in the process that runs the
// teammate, so the lead's process only logs a request it sends and
// delivers it; the teammate's process adopts it from the inboxes, with its
// deadline counted from then, and answers, forces or expires it there.
// Plan approval goes the other way: the lead finds the plan in its inbox,
// records its review in the registry (PlanState), and the teammate's
// process takes it from there.

// requestRemote asks a teammate run elsewhere to shut down.
func (s *shutdowns) requestRemote(from string, mb Member, reason string) (string, error) {
	t := s.t
	name := mb.Name
	switch mb.Status {
	case StatusShutdown, StatusFailed:
		return "", fmt.Errorf("%s is already %s", name, mb.Status)
	}
	if mb.Status == StatusQueued && mb.Worker == "" {
		t.hosting.cancelQueued(mb, reason)
		if m, ok := t.remote(name); ok && m.Status == StatusShutdown {
			return fmt.Sprintf("%s had not started yet: it is shut down.", name), nil
		}
	}
	// Asked before and not answered: the teammate's inbox, and the lead's
	// read on from where this process left it (index.go), never whole.
	id, err := t.indexes.UnansweredIn(name, workspace.LeadName, TypeShutdownRequest, TypeShutdownResponse, workspace.LeadName)
	if err != nil {
		return "", err
	}
	if id != "" && from == workspace.LeadName {
		return fmt.Sprintf("%s was already asked to shut down (request %s); its answer will arrive as a message.", name, id), nil
	}
	ref := RequestRef{ID: protocol.NewID(RequestShutdown), RequestKind: RequestShutdown, From: from, To: name}
	t.events.Emit(Event{Agent: name, Payload: RequestOpened{RequestRef: ref, Deadline: time.Now().UTC().Add(s.timeout), Text: reason}})
	msg := inbox.Message{Type: TypeShutdownRequest, From: from, To: name, Content: shutdownRequestText(reason, ref.ID), CorrelationID: ref.ID}
	if err := s.rq.Send(msg, shutdownPayload{RequestID: ref.ID, Reason: reason}); err != nil {
		s.rq.Answered(name, ref, ByRuntime, OutcomeFailed, "the request could not be delivered: "+err.Error())
		return "", err
	}
	return fmt.Sprintf("Asked %s (on worker %s) to shut down (request %s). Its answer arrives as a shutdown_response message; with no answer within %s it is shut down by force.",
		name, mb.Worker, ref.ID, s.timeout), nil
}

// adopt opens in this process's table the shutdown a teammate it runs
// was asked from another process and has not answered. It runs at every
// idle point of every teammate: the teammate's inbox is read on from the
// last look, and the lead's only while a request there is not known
// answered (index.go).
func (s *shutdowns) adopt(m *member) {
	if s.t.hosting == nil || s.rq.OpenFor(RequestShutdown, m.name) != "" {
		return
	}
	id, err := s.t.indexes.UnansweredIn(m.name, workspace.LeadName, TypeShutdownRequest, TypeShutdownResponse, workspace.LeadName)
	if err != nil || id == "" {
		return
	}
	s.rq.Reopen(RequestRef{ID: id, RequestKind: RequestShutdown, From: workspace.LeadName, To: m.name}, s.timeout, s.force)
}

// reviewRemote reviews a plan whose request is not in this process's
// table: one a teammate run elsewhere sent to the lead's inbox and nobody
// has answered. ok is false when there is no such plan.
func (p *plans) reviewRemote(from, id string, approve bool, feedback string) (string, bool, error) {
	t := p.t
	if t.hosting == nil {
		return "", false, nil
	}
	lead, err := t.indexes.Read(workspace.LeadName)
	if err != nil {
		return "", false, err
	}
	asked, ok := lead.Find(id, func(m inbox.Message) bool { return m.Type == TypePlanApprovalRequest })
	if !ok {
		return "", false, nil
	}
	author := asked.From
	mb, ok := t.remote(author)
	if !ok {
		return "", false, nil
	}
	mate, err := t.indexes.Read(author)
	if err != nil {
		return "", false, err
	}
	if mate.Has(id, TypePlanApprovalResponse) {
		return "", true, fmt.Errorf("the plan request %q was already answered", id)
	}
	state, outcome := PlanApproved, OutcomeApproved
	if !approve {
		state, outcome = PlanRejected, OutcomeRejected
	}
	ref := RequestRef{ID: id, RequestKind: RequestPlanApproval, From: author, To: workspace.LeadName}
	p.rq.Answered(author, ref, from, outcome, feedback)
	// The registry says so before the teammate is told: its process reads it there.
	p.setState(&member{name: author, role: mb.Role, status: mb.Status}, state)
	msg := inbox.Message{Type: TypePlanApprovalResponse, From: from, To: author, Content: planReviewText(from, approve, feedback), CorrelationID: id}
	if err := p.rq.Send(msg, planPayload{RequestID: id, Approve: protocol.Bool(approve), Feedback: feedback}); err != nil {
		return "", true, err
	}
	if approve {
		return fmt.Sprintf("Approved %s's plan; it may now change things.", author), true, nil
	}
	return fmt.Sprintf("Rejected %s's plan; it will revise and resubmit.", author), true, nil
}

// approvedElsewhere reports, for a plan-mode teammate this process runs,
// whether the lead's process recorded its plan approved in the registry;
// a review found there closes the plan's request here.
func (p *plans) approvedElsewhere(m *member) bool {
	c, err := p.t.reg.Read()
	if err != nil {
		return false
	}
	i := c.Find(m.name)
	if i < 0 {
		return false
	}
	state := c.Teammates[i].PlanState
	if state != PlanApproved && state != PlanRejected {
		return false
	}
	if id := p.rq.OpenFor(RequestPlanApproval, m.name); id != "" {
		o := OutcomeApproved
		if state == PlanRejected {
			o = OutcomeRejected
		}
		p.rq.Answer(id, RequestPlanApproval, m.name, o) // the lead's process logged the answer
	}
	if state == PlanApproved {
		m.planApproved.Store(true)
		return true
	}
	return false
}

// queueRoom refuses a spawn on a team with a work queue when max spawns
// already wait for a worker to take them (--max-queue, as the pool bounds
// one process's queue): the registry, changed by compare-and-set, counts
// them for every process that spawns.
func queueRoom(c *Config, name string, max int) error {
	waiting := 0
	for _, m := range c.Teammates {
		if m.Name != name && m.Status == StatusQueued && m.Worker == "" && !m.Ended {
			waiting++
		}
	}
	if waiting >= max {
		return fmt.Errorf("%w: %d spawns already wait for a worker to take them (--max-queue %d)", pool.ErrQueueFull, waiting, max)
	}
	return nil
}

// WorkerPlace is, shortly, where a worker runs a teammate: its id, and
// "@HOST" unless the id names the host already (the default HOST-PID).
// Both come from the registry, which any worker writes: each is cut to 24
// bytes and shown without control characters.
func WorkerPlace(worker, host string) string {
	shown := func(s string) string {
		return FirstLine(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == 0x7f {
				return '?'
			}
			return r
		}, s), 24)
	}
	worker, host = shown(worker), shown(host)
	if host == "" || strings.HasPrefix(worker, host) {
		return worker
	}
	return worker + "@" + host
}
