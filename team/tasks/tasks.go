// Package tasks is the task board as a team's agents use it
// (tools.TaskBoard):
//   - every change is a task event;
//   - the person's TaskCreated and TaskCompleted hooks may refuse one;
//   - with auto-claim on, a claimable task is offered to an idle teammate
//     that fits its role, and told in its inbox (TypeTaskAssigned);
//   - a lead's process that no longer runs the team changes no task (Fenced).
package tasks

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/plugs"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// Doc is the task board as the tools, auto-claim and handoffs use it;
// every change is a compare-and-set on one document.
type Doc interface {
	Read(ctx context.Context) (board.File, error)
	List(ctx context.Context) ([]board.Task, error)
	Create(ctx context.Context, by string, in board.NewTask) (board.Task, error)
	Claim(ctx context.Context, id, agent string) (task board.Task, already bool, err error)
	ClaimNext(ctx context.Context, agent, role string, roles []string) (board.Task, bool, error)
	SetBlockers(ctx context.Context, id, agent string, blockedBy []string) (board.Task, error)
	Update(ctx context.Context, id, agent string, status board.TaskStatus, note string) (task board.Task, unblocked []board.Task, err error)
	HandOver(ctx context.Context, id, from, to string) (board.Task, error)
}

// Inboxes are what auto-claim needs of the agents' inboxes.
type Inboxes interface {
	HasUnread(ctx context.Context, name string) (bool, error)
	Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error)
}

// Agent is a teammate of this process, by name and role.
type Agent struct{ Name, Role string }

// Deps are what the board's service takes from its team.
type Deps struct {
	Board   Doc
	Events  event.Sink
	Inboxes Inboxes
	// Registry gives the roles of every registered teammate.
	Registry interface {
		Read(ctx context.Context) (registry.Config, error)
	}
	// Idle are the teammates of this process that are idle now.
	Idle func() []Agent
	// Plugs are an agent's hooks.
	Plugs func(name string) plugs.Agent
	// Health records whether an inbox could be read (nil: not recorded).
	Health func(name string, err error)
	// Changed tells the team a status may have changed.
	Changed func()
	Failure func(class event.ErrorClass, prefix string, err error) event.Failure
	// Auto turns auto-claim on.
	Auto bool
}

// Service is the board as the team's agents use it (tools.TaskBoard).
type Service struct {
	d Deps
	// offerMu serializes auto-claim passes, and holds while a teammate goes
	// idle, so a task freed meanwhile is never missed by both sides.
	offerMu sync.Mutex
}

// New is the service over d.Board.
func New(d Deps) *Service { return &Service{d: d} }

// Board is the document beneath.
func (tt *Service) Board() Doc { return tt.d.Board }

// CreateTask adds a task (tools.TaskBoard).
func (tt *Service) CreateTask(ctx context.Context, by string, spec tools.TaskSpec) (string, error) {
	if err := tt.d.Plugs(by).TaskHook(ctx, hooks.TaskCreated, "", spec.Subject, spec.Description); err != nil {
		return "", err
	}
	task, err := tt.d.Board.Create(ctx, by, board.NewTask{Subject: spec.Subject, Description: spec.Description, Role: spec.Role, BlockedBy: spec.BlockedBy})
	if err != nil {
		return "", err
	}
	tt.Emit(by, event.TaskChanged{Change: event.TaskChangeCreated}, task)
	if len(task.BlockedBy) == 0 {
		tt.offer(ctx)
	}
	return oneLine(task), nil
}

// ListTasks renders the board (tools.TaskBoard).
func (tt *Service) ListTasks(ctx context.Context) (string, error) {
	tasks, err := tt.d.Board.List(ctx)
	if err != nil {
		return "", err
	}
	if len(tasks) == 0 {
		return "the task board is empty", nil
	}
	var b strings.Builder
	if err := board.FormatTasks(&b, tasks); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ClaimTask claims a task for agent (tools.TaskBoard).
func (tt *Service) ClaimTask(ctx context.Context, agent, id string) (string, error) {
	task, already, err := tt.d.Board.Claim(ctx, id, agent)
	if err != nil {
		return "", err
	}
	if already {
		return fmt.Sprintf("You already own %s (in_progress).", task.ID), nil
	}
	tt.Emit(agent, event.TaskChanged{Change: event.TaskChangeClaimed}, task)
	return fmt.Sprintf("You own %s now (in_progress): %s\n%s\nWhen it is done, call task_update with status completed and a note on the result.",
		task.ID, task.Subject, task.Description), nil
}

// UpdateTask changes what a task waits for and/or its status (tools.TaskBoard).
func (tt *Service) UpdateTask(ctx context.Context, agent, id, statusText, note string, blockedBy []string) (string, error) {
	status := board.TaskStatus(statusText)
	var task board.Task
	var said []string
	if blockedBy != nil {
		var err error
		if task, err = tt.d.Board.SetBlockers(ctx, id, agent, blockedBy); err != nil {
			return "", err
		}
		tt.Emit(agent, event.TaskChanged{Change: event.TaskChangeBlockers, BlockedBy: task.BlockedBy}, task)
		waits := "nothing"
		if len(task.BlockedBy) > 0 {
			waits = strings.Join(task.BlockedBy, ", ")
		}
		said = append(said, fmt.Sprintf("%s now waits for %s.", task.ID, waits))
	}
	if err := tt.completing(ctx, agent, id, status); err != nil {
		return strings.Join(said, " "), err
	}
	if status != "" {
		wasOwner := ""
		if status == board.TaskPending {
			if f, err := tt.d.Board.Read(ctx); err == nil {
				if i := f.Find(id); i >= 0 {
					wasOwner = f.Tasks[i].Owner
				}
			}
		}
		t, unblocked, err := tt.d.Board.Update(ctx, id, agent, status, note)
		if err != nil {
			return strings.Join(said, " "), err
		}
		task = t
		switch status {
		case board.TaskCompleted:
			tt.Emit(agent, event.TaskChanged{Change: event.TaskChangeCompleted, Unblocks: taskIDs(unblocked)}, task)
			s := fmt.Sprintf("%s is completed.", task.ID)
			if len(unblocked) > 0 {
				s += " It unblocks " + ids(unblocked) + "."
			}
			said = append(said, s)
		case board.TaskPending:
			if wasOwner != "" {
				tt.Emit(agent, event.TaskChanged{Change: event.TaskChangeReleased, WasOwner: wasOwner}, task)
			}
			said = append(said, fmt.Sprintf("%s is pending again with no owner.", task.ID))
		case board.TaskInProgress:
			tt.Emit(agent, event.TaskChanged{Change: event.TaskChangeClaimed}, task)
			said = append(said, fmt.Sprintf("You own %s now (in_progress): %s", task.ID, task.Subject))
		}
	}
	if blockedBy != nil || status == board.TaskCompleted || status == board.TaskPending {
		tt.offer(ctx)
	}
	return strings.Join(said, " "), nil
}

// completing runs the TaskCompleted hooks of agent on a task it completes;
// an error is their refusal. The board is read only when there are such
// hooks; a task it does not hold is refused by Update, hook or not.
func (tt *Service) completing(ctx context.Context, agent, id string, status board.TaskStatus) error {
	if status != board.TaskCompleted {
		return nil
	}
	pl := tt.d.Plugs(agent)
	if !pl.Has(hooks.TaskCompleted) {
		return nil
	}
	f, err := tt.d.Board.Read(ctx)
	if err != nil {
		return nil // Update reads it again, and says why it cannot
	}
	if i := f.Find(id); i >= 0 && f.Tasks[i].Status != board.TaskCompleted {
		return pl.TaskHook(ctx, hooks.TaskCompleted, id, f.Tasks[i].Subject, f.Tasks[i].Description)
	}
	return nil
}

// Emit logs one change of task by agent; c says what changed.
func (tt *Service) Emit(agent string, c event.TaskChanged, task board.Task) {
	c.TaskID, c.Subject, c.Status = task.ID, task.Subject, task.Status
	tt.d.Events.Emit(event.Event{Agent: agent, Payload: c})
}

func oneLine(t board.Task) string {
	s := fmt.Sprintf("%s (%s", t.ID, t.Status)
	if len(t.BlockedBy) > 0 {
		s += ", blocked by " + strings.Join(t.BlockedBy, ", ")
	}
	return s + "): " + t.Subject
}

func ids(tasks []board.Task) string { return strings.Join(taskIDs(tasks), ", ") }

func taskIDs(tasks []board.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}
