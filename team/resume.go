package team

import (
	"context"
	"time"
)

// resumeTeammates brings back the registry's teammates for a resumed team:
// each comes back idle with its conversation (restored from its session
// file) and finds its unread messages in its inbox; one stopped mid-cycle
// goes on answering. Teammates ended through the shutdown protocol stay
// shut down, and one that another live process runs is left to it.
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
		live := mb.Status == StatusQueued || mb.Status == StatusWorking || mb.Status == StatusIdle
		if live && mb.PID != t.pid && ProcessAlive(mb.PID) {
			continue
		}
		mctx, cancel := context.WithCancel(t.ctx)
		m := &member{name: mb.Name, role: mb.Role, cancel: cancel, done: make(chan struct{}),
			status: StatusIdle, planMode: mb.PlanMode}
		m.planApproved.Store(mb.PlanState == PlanApproved)
		agent, err := t.newTeammateAgent(m)
		if err != nil {
			cancel()
			t.events.Emit(Event{Kind: EventError, Agent: mb.Name, Detail: "resume: " + err.Error(), IsError: true})
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
		t.events.Emit(Event{Kind: EventStatus, Agent: r.m.name, Role: r.m.role, Status: StatusIdle, Detail: "resumed"})
		t.wg.Add(1)
		go t.runTeammate(r.ctx, r.m, nil)
	}
	return nil
}
