package team

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/plugs"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// teamTasks is the board as the team's agents use it (tools.TaskBoard):
// every change is logged as a task event and, with auto-claim on, offered
// to idle teammates.
type teamTasks struct {
	t     *Team
	board TaskDoc
	auto  bool
	// offerMu serializes auto-claim passes, and holds while a teammate goes
	// idle, so a task freed meanwhile is never missed by both sides.
	offerMu sync.Mutex
}

func newTeamTasks(t *Team, b TaskDoc) *teamTasks {
	return &teamTasks{t: t, board: b, auto: t.opts.AutoClaim}
}

// plugsOf is the plug-ins of the agent of that name this process runs,
// as far as it knows it (the lead, or one of its teammates).
func (tt *teamTasks) plugsOf(name string) plugs.Agent {
	t := tt.t
	if name == workspace.LeadName {
		return t.plugs.For(name, "lead", "")
	}
	t.roster.mu.Lock()
	m := t.roster.members[name]
	t.roster.mu.Unlock()
	if m == nil {
		return t.plugs.For(name, "", "")
	}
	return t.plugs.For(name, m.role, m.root)
}

// Board is the team's shared task board, as a file.
func (t *Team) Board() *board.Board { return t.files.board }

// CreateTask adds a task (tools.TaskBoard).
func (tt *teamTasks) CreateTask(ctx context.Context, by string, spec tools.TaskSpec) (string, error) {
	if err := tt.plugsOf(by).TaskHook(ctx, hooks.TaskCreated, "", spec.Subject, spec.Description); err != nil {
		return "", err
	}
	task, err := tt.board.Create(ctx, by, board.NewTask{Subject: spec.Subject, Description: spec.Description, Role: spec.Role, BlockedBy: spec.BlockedBy})
	if err != nil {
		return "", err
	}
	tt.emit(by, event.TaskChanged{Change: event.TaskChangeCreated}, task)
	if len(task.BlockedBy) == 0 {
		tt.offer(ctx)
	}
	return oneLine(task), nil
}

// ListTasks renders the board (tools.TaskBoard).
func (tt *teamTasks) ListTasks(ctx context.Context) (string, error) {
	tasks, err := tt.board.List(ctx)
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
func (tt *teamTasks) ClaimTask(ctx context.Context, agent, id string) (string, error) {
	task, already, err := tt.board.Claim(ctx, id, agent)
	if err != nil {
		return "", err
	}
	if already {
		return fmt.Sprintf("You already own %s (in_progress).", task.ID), nil
	}
	tt.emit(agent, event.TaskChanged{Change: event.TaskChangeClaimed}, task)
	return fmt.Sprintf("You own %s now (in_progress): %s\n%s\nWhen it is done, call task_update with status completed and a note on the result.",
		task.ID, task.Subject, task.Description), nil
}

// UpdateTask changes what a task waits for and/or its status (tools.TaskBoard).
func (tt *teamTasks) UpdateTask(ctx context.Context, agent, id, statusText, note string, blockedBy []string) (string, error) {
	status := board.TaskStatus(statusText)
	var task board.Task
	var said []string
	if blockedBy != nil {
		var err error
		if task, err = tt.board.SetBlockers(ctx, id, agent, blockedBy); err != nil {
			return "", err
		}
		tt.emit(agent, event.TaskChanged{Change: event.TaskChangeBlockers, BlockedBy: task.BlockedBy}, task)
		waits := "nothing"
		if len(task.BlockedBy) > 0 {
			waits = strings.Join(task.BlockedBy, ", ")
		}
		said = append(said, fmt.Sprintf("%s now waits for %s.", task.ID, waits))
	}
	if status == board.TaskCompleted && tt.t.opts.Hooks.Has(hooks.TaskCompleted) {
		// A task the board does not hold is refused by Update, hook or not.
		if f, err := tt.board.Read(); err == nil {
			if i := f.Find(id); i >= 0 && f.Tasks[i].Status != board.TaskCompleted {
				if err := tt.plugsOf(agent).TaskHook(ctx, hooks.TaskCompleted, id, f.Tasks[i].Subject, f.Tasks[i].Description); err != nil {
					return strings.Join(said, " "), err
				}
			}
		}
	}
	if status != "" {
		wasOwner := ""
		if status == board.TaskPending {
			if f, err := tt.board.Read(); err == nil {
				if i := f.Find(id); i >= 0 {
					wasOwner = f.Tasks[i].Owner
				}
			}
		}
		t, unblocked, err := tt.board.Update(ctx, id, agent, status, note)
		if err != nil {
			return strings.Join(said, " "), err
		}
		task = t
		switch status {
		case board.TaskCompleted:
			tt.emit(agent, event.TaskChanged{Change: event.TaskChangeCompleted, Unblocks: taskIDs(unblocked)}, task)
			s := fmt.Sprintf("%s is completed.", task.ID)
			if len(unblocked) > 0 {
				s += " It unblocks " + ids(unblocked) + "."
			}
			said = append(said, s)
		case board.TaskPending:
			if wasOwner != "" {
				tt.emit(agent, event.TaskChanged{Change: event.TaskChangeReleased, WasOwner: wasOwner}, task)
			}
			said = append(said, fmt.Sprintf("%s is pending again with no owner.", task.ID))
		case board.TaskInProgress:
			tt.emit(agent, event.TaskChanged{Change: event.TaskChangeClaimed}, task)
			said = append(said, fmt.Sprintf("You own %s now (in_progress): %s", task.ID, task.Subject))
		}
	}
	if blockedBy != nil || status == board.TaskCompleted || status == board.TaskPending {
		tt.offer(ctx)
	}
	return strings.Join(said, " "), nil
}

// emit logs one change of task by agent; c says what changed.
func (tt *teamTasks) emit(agent string, c event.TaskChanged, task board.Task) {
	c.TaskID, c.Subject, c.Status = task.ID, task.Subject, task.Status
	tt.t.events.Emit(event.Event{Agent: agent, Payload: c})
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
