package team

import (
	"context"
	"time"

	"github.com/agentteam/agentteam/workspace"
)

// resumeTeammates brings back the registry's teammates for a resumed team:
// each comes back idle with its conversation (restored from its session
// file) and finds its unread messages in its inbox; one stopped mid-cycle
// goes on answering. Teammates ended through the shutdown protocol stay
// shut down. This process holds the owner lock, so no other runs any of them.
func (t *Team) resumeTeammates() error {
	c, err := t.reg.Read()
	if err != nil {
		return err
	}
	type resumed struct {
		m   *member
		ctx context.Context
	}
	var back []resumed
	for _, mb := range c.Teammates {
		if mb.Ended {
			continue
		}
		mctx, cancel := t.stopping.context()
		m := &member{name: mb.Name, role: mb.Role, cancel: cancel, done: make(chan struct{}),
			status: StatusIdle, planMode: mb.PlanMode}
		m.planApproved.Store(mb.PlanState == PlanApproved)
		agent, err := t.newTeammateAgent(m)
		if err != nil {
			cancel()
			t.events.Emit(Event{Agent: mb.Name, Payload: failure(ClassSession, "resume: ", err)})
			continue
		}
		m.agent = agent
		back = append(back, resumed{m, mctx})
	}
	if len(back) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, r := range back {
		names[r.m.name] = true
	}
	now := time.Now().UTC()
	if _, err := t.reg.Update(func(c *Config) error {
		for i := range c.Teammates {
			if mb := &c.Teammates[i]; names[mb.Name] {
				mb.Status, mb.PID, mb.Error, mb.Activity, mb.UpdatedAt = StatusIdle, t.pid, "", "", now
			}
		}
		return nil
	}); err != nil {
		for _, r := range back {
			r.m.cancel()
		}
		return err
	}
	t.mu.Lock()
	for _, r := range back {
		t.members[r.m.name] = r.m
	}
	t.mu.Unlock()
	for _, r := range back {
		t.reopenRequests(r.m.name)
		t.events.Emit(Event{Agent: r.m.name, Payload: StatusChanged{Role: r.m.role, Status: StatusIdle, Reason: "resumed", PID: t.pid}})
		t.wg.Add(1)
		go t.runTeammate(r.ctx, r.m, nil)
	}
	return nil
}

// reopenRequests re-registers a resumed teammate's protocol requests that
// were still unanswered when the earlier process stopped, found from the
// inboxes (a request without a reply of the same correlation_id), each with
// a fresh timeout: the answer the lead or teammate gives now still counts.
func (t *Team) reopenRequests(name string) {
	leadMsgs, _, err := t.store.ReadAll(workspace.LeadName)
	if err != nil {
		return
	}
	mateMsgs, _, err := t.store.ReadAll(name)
	if err != nil {
		return
	}
	t.shutdowns.reopen(name, leadMsgs, mateMsgs)
	t.plans.reopen(name, leadMsgs, mateMsgs)
}
