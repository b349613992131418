package team

import (
	"context"
	"time"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
)

// resumeTeammates brings back the registry's teammates for a resumed team:
// each comes back idle with its conversation (restored from its session
// file) and finds its unread messages in its inbox; one stopped mid-cycle
// goes on answering. Teammates ended through the shutdown protocol stay
// shut down. This process holds the owner lock, so no other runs any of them.
func (r *roster) resumeTeammates(ctx context.Context) error {
	t := r.t
	c, err := t.reg.Read(ctx)
	if err != nil {
		return err
	}
	type resumed struct {
		m   *member
		ctx context.Context
	}
	var back []resumed
	elsewhere := t.hosting.runsElsewhere()
	for _, mb := range c.Teammates {
		if mb.Ended {
			continue
		}
		if (mb.Status == registry.StatusIdle || mb.Status == registry.StatusWorking || mb.Status == registry.StatusQueued) && elsewhere(&mb) {
			continue // a live worker runs it
		}
		choice, err := t.meters.resume(mb)
		if err != nil {
			t.events.Emit(event.Event{Agent: mb.Name, Payload: failure(event.ClassModel, "resume: ", err)})
			continue
		}
		mctx, cancel := context.WithCancel(t.root)
		m := &member{name: mb.Name, role: mb.Role, cancel: cancel, done: make(chan struct{}),
			status: registry.StatusIdle, planMode: mb.PlanMode, model: t.meters.forAgent(choice, mb.Usage())}
		m.planApproved.Store(mb.PlanState == registry.PlanApproved)
		if mb.Isolation == worktree.IsolationWorktree {
			// Its worktree again: found, or made anew if it was removed.
			where, err := t.placing.place(context.Background(), mb.Name, worktree.IsolationWorktree, &mb)
			if err != nil {
				cancel()
				t.events.Emit(event.Event{Agent: mb.Name, Payload: failure(event.ClassInternal, "resume its worktree: ", err)})
				continue
			}
			m.root = where.Root
			t.worktrees.Record(ctx, mb.Name, func(e *registry.Member) { e.Worktree, e.Branch, e.Merged = mb.Worktree, mb.Branch, mb.Merged })
		}
		agent, err := r.newTeammateAgent(ctx, m, "resume")
		if err != nil {
			cancel()
			t.events.Emit(event.Event{Agent: mb.Name, Payload: failure(event.ClassSession, "resume: ", err)})
			continue
		}
		m.agent = agent
		back = append(back, resumed{m, mctx})
	}
	if len(back) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, b := range back {
		names[b.m.name] = true
	}
	now := time.Now().UTC()
	if err := t.reg.Change(ctx, func(c *registry.Config) error {
		for i := range c.Teammates {
			if mb := &c.Teammates[i]; names[mb.Name] {
				mb.Status, mb.PID, mb.Error, mb.Activity, mb.UpdatedAt = registry.StatusIdle, t.pid, "", "", now
				if t.hosting != nil {
					mb.Worker, mb.Host = t.hosting.opts.ID, t.hosting.opts.Host
				}
			}
		}
		return nil
	}); err != nil {
		for _, b := range back {
			b.m.cancel()
		}
		return err
	}
	r.mu.Lock()
	for _, b := range back {
		r.members[b.m.name] = b.m
	}
	r.mu.Unlock()
	for _, b := range back {
		t.protocols.reopen(b.ctx, t.store, b.m.name)
		t.events.Emit(event.Event{Agent: b.m.name, Payload: event.StatusChanged{Role: b.m.role, Status: registry.StatusIdle, Reason: "resumed", PID: t.pid}})
		t.wg.Add(1)
		go r.runTeammate(b.ctx, b.m, nil)
	}
	return nil
}
