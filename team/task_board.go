package team

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agentteam/agentteam/tools"
)

// teamTasks is the board as the team's agents use it (tools.TaskBoard):
// every change is logged as a task event and, with auto-claim on, offered
// to idle teammates.
type teamTasks struct {
	t     *Team
	board *Board
	auto  bool
	// offerMu serializes auto-claim passes, and holds while a teammate goes
	// idle, so a task freed meanwhile is never missed by both sides.
	offerMu sync.Mutex
}

func newTeamTasks(t *Team) *teamTasks {
	return &teamTasks{t: t, board: NewBoard(t.ws.TasksPath()), auto: t.opts.AutoClaim}
}

// Board is the team's shared task board.
func (t *Team) Board() *Board { return t.tasks.board }

// CreateTask adds a task (tools.TaskBoard).
func (tt *teamTasks) CreateTask(ctx context.Context, by string, spec tools.TaskSpec) (string, error) {
	task, err := tt.board.Create(ctx, by, NewTask{Subject: spec.Subject, Description: spec.Description, Role: spec.Role, BlockedBy: spec.BlockedBy})
	if err != nil {
		return "", err
	}
	tt.emit(by, TaskChanged{Change: TaskChangeCreated}, task)
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
	if err := FormatTasks(&b, tasks); err != nil {
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
	tt.emit(agent, TaskChanged{Change: TaskChangeClaimed}, task)
	return fmt.Sprintf("You own %s now (in_progress): %s\n%s\nWhen it is done, call task_update with status completed and a note on the result.",
		task.ID, task.Subject, task.Description), nil
}

// UpdateTask changes what a task waits for and/or its status (tools.TaskBoard).
func (tt *teamTasks) UpdateTask(ctx context.Context, agent, id, statusText, note string, blockedBy []string) (string, error) {
	status := TaskStatus(statusText)
	var task Task
	var said []string
	if blockedBy != nil {
		var err error
		if task, err = tt.board.SetBlockers(ctx, id, agent, blockedBy); err != nil {
			return "", err
		}
		tt.emit(agent, TaskChanged{Change: TaskChangeBlockers, BlockedBy: task.BlockedBy}, task)
		waits := "nothing"
		if len(task.BlockedBy) > 0 {
			waits = strings.Join(task.BlockedBy, ", ")
		}
		said = append(said, fmt.Sprintf("%s now waits for %s.", task.ID, waits))
	}
	if status != "" {
		wasOwner := ""
		if status == TaskPending {
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
		case TaskCompleted:
			tt.emit(agent, TaskChanged{Change: TaskChangeCompleted, Unblocks: taskIDs(unblocked)}, task)
			s := fmt.Sprintf("%s is completed.", task.ID)
			if len(unblocked) > 0 {
				s += " It unblocks " + ids(unblocked) + "."
			}
			said = append(said, s)
		case TaskPending:
			if wasOwner != "" {
				tt.emit(agent, TaskChanged{Change: TaskChangeReleased, WasOwner: wasOwner}, task)
			}
			said = append(said, fmt.Sprintf("%s is pending again with no owner.", task.ID))
		case TaskInProgress:
			tt.emit(agent, TaskChanged{Change: TaskChangeClaimed}, task)
			said = append(said, fmt.Sprintf("You own %s now (in_progress): %s", task.ID, task.Subject))
		}
	}
	if blockedBy != nil || status == TaskCompleted || status == TaskPending {
		tt.offer(ctx)
	}
	return strings.Join(said, " "), nil
}

// emit logs one change of task by agent; c says what changed.
func (tt *teamTasks) emit(agent string, c TaskChanged, task Task) {
	c.TaskID, c.Subject, c.Status = task.ID, task.Subject, task.Status
	tt.t.events.Emit(Event{Agent: agent, Payload: c})
}

// FormatTasks writes tasks as a table: id, status, owner, blocked by, subject.
func FormatTasks(w io.Writer, tasks []Task) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tOWNER\tBLOCKED BY\tSUBJECT")
	for _, t := range tasks {
		owner := t.Owner
		if owner == "" {
			owner = "-"
		}
		subject := t.Subject
		if t.Role != "" {
			subject += " [" + t.Role + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, owner, orNone(t.BlockedBy), subject)
	}
	return tw.Flush()
}

func oneLine(t Task) string {
	s := fmt.Sprintf("%s (%s", t.ID, t.Status)
	if len(t.BlockedBy) > 0 {
		s += ", blocked by " + strings.Join(t.BlockedBy, ", ")
	}
	return s + "): " + t.Subject
}

func ids(tasks []Task) string { return strings.Join(taskIDs(tasks), ", ") }

func taskIDs(tasks []Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}
