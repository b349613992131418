package team

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// member returns a teammate this process runs.
func (r *roster) member(ctx context.Context, name string) (*member, error) {
	t := r.t
	r.mu.Lock()
	m, ok := r.members[name]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := CheckRecipient(ctx, t.reg, name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s is not run by this agentteam process", name)
}

func (r *roster) statusOf(m *member) registry.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m.status
}

// expiredMember is the teammate of a request whose deadline passed, or
// nil when the team is stopping (or the teammate is not run here).
func (r *roster) expiredMember(name string) *member {
	t := r.t
	if t.root.Err() != nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.members[name]
}

// The shutdown and plan protocols run in team/protocol; this is the
// team's side of them: its roster as protocol.Roster.

// Protocols are the team's protocols as the agents' tools and the chats
// use them (tools.Protocols): shutdown, plan approval and handoff.
type Protocols struct {
	shutdowns *protocol.Shutdowns
	plans     *protocol.Plans
	handoffs  *handoff.Service
	requests  *protocol.Requests
	reg       registryReader
}

// Protocols are the team's protocols.
func (t *Team) Protocols() *Protocols { return t.protocols }

// RequestShutdown asks a teammate to shut down (tools.Protocols).
func (p *Protocols) RequestShutdown(ctx context.Context, from, name, reason string) (string, error) {
	return p.shutdowns.Request(ctx, from, name, reason)
}

// RespondShutdown is a teammate's answer to a shutdown request (tools.Protocols).
func (p *Protocols) RespondShutdown(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	return p.shutdowns.Respond(ctx, from, id, approve, reason)
}

// SubmitPlan sends a plan-mode teammate's plan to the lead (tools.Protocols).
func (p *Protocols) SubmitPlan(ctx context.Context, from, plan string) (string, error) {
	return p.plans.Submit(ctx, from, plan)
}

// ReviewPlan approves or rejects a plan (tools.Protocols).
func (p *Protocols) ReviewPlan(ctx context.Context, from, id string, approve bool, feedback string) (string, error) {
	return p.plans.Review(ctx, from, id, approve, feedback)
}

// Handoff hands a task, with the sender's context, to another agent of
// this process (tools.Protocols). The runtimes of both sides run every step
// as its message is delivered; the result says how it went, or that it is
// still under way.
func (p *Protocols) Handoff(ctx context.Context, from string, spec tools.HandoffSpec) (string, error) {
	return p.handoffs.Start(ctx, from, spec)
}

// OpenPlanRequest is the id of a teammate's plan waiting for review, so the
// person can approve or reject it by the teammate's name.
func (p *Protocols) OpenPlanRequest(name string) (id string, ok bool) {
	id = p.requests.OpenFor(event.RequestPlanApproval, name)
	return id, id != ""
}

// ReviewPlanOf answers, as the person, the plan teammate name waits with.
func (p *Protocols) ReviewPlanOf(ctx context.Context, name string, approve bool, feedback string) (string, error) {
	if err := inbox.ValidateTeammateName(name); err != nil {
		return "", err
	}
	if err := CheckRecipient(ctx, p.reg, name); err != nil {
		return "", err // no such teammate: not "nobody has no plan waiting"
	}
	id, ok := p.OpenPlanRequest(name)
	if !ok {
		return "", fmt.Errorf("%s has no plan waiting for review", name)
	}
	return p.ReviewPlan(ctx, inbox.UserName, id, approve, feedback)
}

// newProtocols builds the team's shutdown, plan and handoff protocols,
// once its requests, indexes and registry are.
func newProtocols(t *Team) *Protocols {
	d := protocolDeps(t)
	t.shutdowns = protocol.NewShutdowns(d, t.opts.ShutdownTimeout)
	t.plans = protocol.NewPlans(d, t.opts.PlanTimeout)
	t.handoffs = newHandoffs(t)
	return &Protocols{shutdowns: t.shutdowns, plans: t.plans, handoffs: t.handoffs, requests: t.requests, reg: t.reg}
}

// protocolDeps are the team as its shutdown and plan protocols see it.
func protocolDeps(t *Team) protocol.Deps {
	return protocol.Deps{Requests: t.requests, Events: t.events, Registry: t.reg, Indexes: t.indexes,
		Roster: protocolRoster{t}, Across: t.opts.Queue != nil, Failure: failure, Notify: t.changed.notify}
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

// protocolRoster is the roster as protocol.Roster.
type protocolRoster struct{ t *Team }

func (p protocolRoster) Mate(ctx context.Context, name string) (protocol.Mate, error) {
	m, err := p.t.roster.member(ctx, name)
	if err != nil {
		return nil, err
	}
	return mate{p.t.roster, m}, nil
}

func (p protocolRoster) Expired(name string) protocol.Mate {
	if m := p.t.roster.expiredMember(name); m != nil {
		return mate{p.t.roster, m}
	}
	return nil
}

func (p protocolRoster) Remote(ctx context.Context, name string) (registry.Member, bool) {
	return p.t.hosting.remote(ctx, name)
}

func (p protocolRoster) CancelQueued(ctx context.Context, m registry.Member, reason string) {
	p.t.hosting.cancelQueued(ctx, m, reason)
}

// mate is a teammate of the roster as protocol.Mate.
type mate struct {
	r *roster
	m *member
}

func (x mate) Name() string                  { return x.m.name }
func (x mate) Role() string                  { return x.m.role }
func (x mate) Status() registry.Status       { return x.r.statusOf(x.m) }
func (x mate) PlanMode() bool                { return x.m.planMode }
func (x mate) PlanApproved() bool            { return x.m.planApproved.Load() }
func (x mate) SetPlanApproved(approved bool) { x.m.planApproved.Store(approved) }

func (x mate) RefreshPlan() {
	if x.m.planFromRegistry != nil {
		x.m.planFromRegistry()
	}
}

func (x mate) ApproveStop() {
	x.r.mu.Lock()
	x.m.stopApproved = true
	stop := x.m.cycleCancel
	x.r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (x mate) Absorb() error {
	_, err := x.m.agent.Absorb()
	return err
}

func (x mate) Stop() {
	x.m.cancel()
	<-x.m.done
}

func (x mate) ShutDown(why string, forced bool) {
	x.r.setStatus(x.m, registry.StatusShutdown, why, func(mb *registry.Member) {
		mb.Activity, mb.Ended = "", true
		if forced {
			mb.Error = why
		}
	})
}

// reopen re-registers a resumed teammate's protocol requests that
// were still unanswered when the earlier process stopped, found from the
// inboxes (a request without a reply of the same correlation_id), each with
// a fresh timeout: the answer the lead or teammate gives now still counts.
func (p *Protocols) reopen(ctx context.Context, store Mailbox, name string) {
	leadMsgs, _, err := store.ReadAll(ctx, inbox.LeadName)
	if err != nil {
		return
	}
	mateMsgs, _, err := store.ReadAll(ctx, name)
	if err != nil {
		return
	}
	p.shutdowns.Reopen(name, leadMsgs, mateMsgs)
	p.plans.Reopen(name, leadMsgs, mateMsgs)
}
