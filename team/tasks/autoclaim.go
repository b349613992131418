package tasks

import (
	"context"
	"fmt"
	"sort"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
)

// TypeTaskAssigned is the inbox type of the message that gives an idle
// teammate the task auto-claim took for it; its task_id names the task.
const TypeTaskAssigned = "task_assigned"

// Idling runs as a teammate is about to go idle. With auto-claim on it gives
// the teammate the next claimable task that fits its role; the returned func
// must run once the idle status is recorded: until then no offer pass runs,
// so a task freed meanwhile is not missed by both this and the pass.
func (tt *Service) Idling(ctx context.Context, name, role string) (done func()) {
	if tt == nil || !tt.d.Auto || ctx.Err() != nil {
		return func() {}
	}
	tt.offerMu.Lock()
	tt.assign(ctx, name, role, tt.roles(ctx))
	return tt.offerMu.Unlock
}

// offer gives claimable tasks to this process's idle teammates, one each,
// after a change on the board may have freed some.
func (tt *Service) offer(ctx context.Context) {
	if !tt.d.Auto {
		return
	}
	tt.offerMu.Lock()
	defer tt.offerMu.Unlock()
	idle := tt.d.Idle()
	if len(idle) == 0 {
		return
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].Name < idle[j].Name })
	roles := tt.roles(ctx)
	for _, c := range idle {
		if ctx.Err() != nil {
			return
		}
		tt.assign(ctx, c.Name, c.Role, roles)
	}
}

// assign claims the next fitting task for a teammate that has nothing unread
// and tells it in its inbox, which wakes it.
func (tt *Service) assign(ctx context.Context, name, role string, roles []string) {
	if has, err := tt.d.Inboxes.HasUnread(ctx, name); err != nil || has {
		if tt.d.Health != nil {
			tt.d.Health(name, err)
		}
		return // it has messages to answer first, and comes back here when idle again
	}
	task, ok, err := tt.d.Board.ClaimNext(ctx, name, role, roles)
	if err != nil {
		tt.d.Events.Emit(event.Event{Agent: name, Payload: tt.d.Failure(event.ClassBoard, "auto-claim: ", err)})
		return
	}
	if !ok {
		return
	}
	tt.Emit(name, event.TaskChanged{Change: event.TaskChangeAutoClaimed}, task)
	content := fmt.Sprintf("You have been assigned task %s: %s\n%s\nWhen it is done, call task_update with id %s, status completed and a note on the result.",
		task.ID, task.Subject, task.Description, task.ID)
	m, err := tt.d.Inboxes.Append(ctx, name, inbox.Message{Type: TypeTaskAssigned, From: inbox.LeadName, To: name, Content: content, TaskID: task.ID})
	if err != nil {
		// Untold, the teammate would hold the task forever: give it back.
		_, _, _ = tt.d.Board.Update(ctx, task.ID, inbox.LeadName, board.TaskPending, "could not tell "+name+": "+err.Error())
		tt.d.Events.Emit(event.Event{Agent: name, Payload: tt.d.Failure(event.ClassInbox, "auto-claim: tell "+name+": ", err)})
		return
	}
	tt.d.Events.Emit(event.Event{Payload: event.Delivered(m)})
	tt.d.Changed()
}

// roles are the roles of every registered teammate, to tell a task meant for
// another role from one meant for anyone.
func (tt *Service) roles(ctx context.Context) []string {
	c, err := tt.d.Registry.Read(ctx)
	if err != nil {
		return nil
	}
	var roles []string
	for _, m := range c.Teammates {
		roles = append(roles, m.Role)
	}
	return roles
}
