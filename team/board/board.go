// Package board is the shared task board: one file, tasks/board.json, with
// the tasks, claims by compare-and-set, blockers, the pick of the next
// claimable task and hand-over. It knows nothing of agents' goroutines:
// the team wraps it, logs its changes and offers freed tasks.
package board

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
)

// errNoChange lets a change decline to write.
var errNoChange = statefile.ErrNoChange

// TaskStatus is where a task on the board stands.
type TaskStatus string

// Task statuses on the board.
const (
	TaskPending    TaskStatus = "pending"
	TaskInProgress TaskStatus = "in_progress"
	TaskCompleted  TaskStatus = "completed"
)

// Limits on what a task may hold, so one file stays small enough to rewrite on every change.
const (
	MaxTaskSubject = 200
	MaxTaskText    = 32 << 10
)

// Refusals of the board, wrapped with the particulars; callers test with errors.Is.
var (
	ErrTaskNotFound   = errors.New("no such task")
	ErrTaskTaken      = errors.New("the task belongs to someone else")
	ErrTaskBlocked    = errors.New("the task is blocked by unfinished tasks")
	ErrTaskNotPending = errors.New("the task is not pending")
	ErrTaskNotAllowed = errors.New("only the owner or the lead may do that")
	ErrTaskInvalid    = errors.New("invalid task")
)

// Task is one entry of the shared task board.
type Task struct {
	ID          string `json:"id"`
	Subject     string `json:"subject"`
	Description string `json:"description,omitempty"`
	// Role is an optional hint: which role should take the task (auto-claim honours it).
	Role      string     `json:"role,omitempty"`
	Status    TaskStatus `json:"status"`
	Owner     string     `json:"owner,omitempty"`
	BlockedBy []string   `json:"blocked_by"`
	// Note is what the last update said: the result when completed, the reason when released.
	Note      string    `json:"note,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// NewTask is what a creator gives; the board assigns the rest.
type NewTask struct {
	Subject, Description, Role string
	BlockedBy                  []string
}

// File is the whole board as stored in tasks/board.json.
type File struct {
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt"`
	// NextID numbers tasks t1, t2, … so ids stay short enough for a person to type.
	NextID int    `json:"nextId"`
	Tasks  []Task `json:"tasks"`
}

// Find returns the index of the task with id, or -1.
func (f *File) Find(id string) int {
	for i := range f.Tasks {
		if f.Tasks[i].ID == id {
			return i
		}
	}
	return -1
}

// Board is the shared task board in one file, board.json: every change is one
// read-modify-write under a cross-process lock, so a claim is a true
// compare-and-set across all tasks at once (blockers included).
type Board struct {
	doc  Store
	file *statefile.Doc[*File] // nil when the board is not a file
}

// Store is the document the board is kept in: the file (statefile.Doc, the
// default) or a KV entry changed by compare-and-set on its revision
// (natsstore.Doc). Update applies fn to the current board, counts the
// change (File.Changed) and stores it unless fn returns
// statefile.ErrNoChange; a missing board reads as Empty(). A read or a
// change whose ctx is done does nothing.
type Store interface {
	Read(ctx context.Context) (*File, error)
	Update(ctx context.Context, fn func(**File) error) (*File, error)
}

// Empty is the board before its first change.
func Empty() *File { return &File{Tasks: []Task{}} }

// New opens the board at path; the file is created on the first change.
func New(path string) *Board {
	file := statefile.NewDoc(path, "task board", Empty)
	return &Board{doc: file, file: file}
}

// NewOn is the board kept in doc, another store than a file.
func NewOn(doc Store) *Board { return &Board{doc: doc} }

// Path is the board file; "" when the board is kept elsewhere.
func (b *Board) Path() string {
	if b.file == nil {
		return ""
	}
	return b.file.Path()
}

// OnWriteError makes fn see every failed write of the board file (a full
// disk stops the team); call it before the board's first use.
func (b *Board) OnWriteError(fn func(error)) {
	if b.file != nil {
		b.file.OnWriteError = fn
	}
}

// Read returns the board as it is on disk; a missing file is an empty board.
func (b *Board) Read(ctx context.Context) (File, error) {
	f, err := b.doc.Read(ctx)
	if err != nil {
		return File{}, err
	}
	if f.Tasks == nil {
		f.Tasks = []Task{}
	}
	return *f, nil
}

// List returns every task in the order they were created.
func (b *Board) List(ctx context.Context) ([]Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := b.Read(ctx)
	return f.Tasks, err
}

// update applies fn to the board under the lock and writes the result once,
// bumping the version; errNoChange from fn writes nothing.
func (b *Board) update(ctx context.Context, fn func(*File) error) (File, error) {
	f, err := b.doc.Update(ctx, func(f **File) error { return fn(*f) })
	if f == nil {
		return File{}, err
	}
	return *f, err
}

// Clone copies the board deeply: tasks hold blocked_by slices.
func (f *File) Clone() *File {
	cp := *f
	cp.Tasks = make([]Task, len(f.Tasks))
	for i, t := range f.Tasks {
		t.BlockedBy = append([]string(nil), t.BlockedBy...)
		cp.Tasks[i] = t
	}
	return &cp
}

// Changed counts a change: the version bumped, the time.
func (f *File) Changed() {
	f.Version++
	f.UpdatedAt = time.Now().UTC()
}

// Create adds a pending task by the named agent and returns it.
func (b *Board) Create(ctx context.Context, by string, in NewTask) (Task, error) {
	if err := inbox.ValidateName(by); err != nil {
		return Task{}, fmt.Errorf("%w: creator: %v", ErrTaskInvalid, err)
	}
	in.Subject = strings.TrimSpace(in.Subject)
	in.Role = strings.TrimSpace(in.Role)
	switch {
	case in.Subject == "":
		return Task{}, fmt.Errorf("%w: the subject is empty: say in a few words what is to be done", ErrTaskInvalid)
	case utf8.RuneCountInString(in.Subject) > MaxTaskSubject:
		return Task{}, fmt.Errorf("%w: the subject is longer than %d characters: put details in the description", ErrTaskInvalid, MaxTaskSubject)
	case len(in.Description) > MaxTaskText:
		return Task{}, fmt.Errorf("%w: the description is longer than %d bytes", ErrTaskInvalid, MaxTaskText)
	case len(in.Role) > 64:
		return Task{}, fmt.Errorf("%w: the role hint is longer than 64 bytes", ErrTaskInvalid)
	}
	blockers, err := cleanIDs(in.BlockedBy)
	if err != nil {
		return Task{}, err
	}
	var task Task
	_, err = b.update(ctx, func(f *File) error {
		for _, id := range blockers {
			if f.Find(id) < 0 {
				return fmt.Errorf("%w: blocked_by names %s, which is not on the board", ErrTaskNotFound, id)
			}
		}
		f.NextID = max(f.NextID, len(f.Tasks)) + 1
		now := time.Now().UTC()
		task = Task{
			ID: "t" + strconv.Itoa(f.NextID), Subject: in.Subject, Description: in.Description, Role: in.Role,
			Status: TaskPending, BlockedBy: blockers, CreatedBy: by, CreatedAt: now, UpdatedAt: now,
		}
		f.Tasks = append(f.Tasks, task)
		return nil
	})
	return task, err
}

// Claim makes agent the owner of task id, compare-and-set: it is refused if
// someone else owns the task, a blocker is not completed, or the task is not
// pending. Claiming a task agent already owns succeeds and changes nothing
// (already reports that).
func (b *Board) Claim(ctx context.Context, id, agent string) (task Task, already bool, err error) {
	if err := inbox.ValidateName(agent); err != nil {
		return Task{}, false, fmt.Errorf("%w: %v", ErrTaskInvalid, err)
	}
	_, err = b.update(ctx, func(f *File) error {
		i := f.Find(id)
		if i < 0 {
			return notFound(id)
		}
		t := &f.Tasks[i]
		if t.Status == TaskInProgress && t.Owner == agent {
			task, already = *t, true
			return errNoChange
		}
		if err := claimable(f, t); err != nil {
			return err
		}
		claim(t, agent)
		task = *t
		return nil
	})
	return task, already, err
}

// claimable says why t cannot be claimed, or nil.
func claimable(f *File, t *Task) error {
	switch {
	case t.Status == TaskCompleted:
		return fmt.Errorf("%s is already completed (by %s): %w", t.ID, orNobody(t.Owner), ErrTaskNotPending)
	case t.Owner != "":
		return fmt.Errorf("%s is owned by %s: %w", t.ID, t.Owner, ErrTaskTaken)
	case t.Status != TaskPending:
		return fmt.Errorf("%s is %s: %w", t.ID, t.Status, ErrTaskNotPending)
	}
	if open := openBlockers(f, t); len(open) > 0 {
		return fmt.Errorf("%s waits for %s to be completed: %w", t.ID, strings.Join(open, ", "), ErrTaskBlocked)
	}
	return nil
}

func claim(t *Task, agent string) {
	t.Owner = agent
	t.Status = TaskInProgress
	t.UpdatedAt = time.Now().UTC()
}

// openBlockers lists the blockers of t that are not completed.
func openBlockers(f *File, t *Task) []string {
	var open []string
	for _, id := range t.BlockedBy {
		if j := f.Find(id); j < 0 || f.Tasks[j].Status != TaskCompleted {
			open = append(open, id)
		}
	}
	return open
}

// Update changes a task's status on behalf of agent, with a note:
// completed finishes it (owner or lead) and returns the tasks that became
// claimable; pending releases it (owner or lead) to nobody; in_progress is a
// claim. A completed task does not change any more.
func (b *Board) Update(ctx context.Context, id, agent string, status TaskStatus, note string) (task Task, unblocked []Task, err error) {
	if err := inbox.ValidateName(agent); err != nil {
		return Task{}, nil, fmt.Errorf("%w: %v", ErrTaskInvalid, err)
	}
	if len(note) > MaxTaskText {
		return Task{}, nil, fmt.Errorf("%w: the note is longer than %d bytes: put long results in a file and name it", ErrTaskInvalid, MaxTaskText)
	}
	switch status {
	case TaskInProgress:
		task, _, err = b.Claim(ctx, id, agent)
		return task, nil, err
	case TaskPending, TaskCompleted:
	default:
		return Task{}, nil, fmt.Errorf("%w: status %q: use pending, in_progress or completed", ErrTaskInvalid, status)
	}
	_, err = b.update(ctx, func(f *File) error {
		unblocked = unblocked[:0]
		i := f.Find(id)
		if i < 0 {
			return notFound(id)
		}
		t := &f.Tasks[i]
		if t.Status == TaskCompleted {
			return fmt.Errorf("%s is already completed (by %s): %w", t.ID, orNobody(t.Owner), ErrTaskNotPending)
		}
		if status == TaskPending && t.Owner == "" {
			task = *t // releasing what nobody holds changes nothing
			return errNoChange
		}
		if t.Owner == "" && agent != inbox.LeadName {
			return fmt.Errorf("%s has no owner yet: claim it first: %w", t.ID, ErrTaskNotAllowed)
		}
		if t.Owner != "" && t.Owner != agent && agent != inbox.LeadName {
			return fmt.Errorf("%s is owned by %s: %w", t.ID, t.Owner, ErrTaskNotAllowed)
		}
		if status == TaskCompleted {
			if open := openBlockers(f, t); len(open) > 0 {
				return fmt.Errorf("%s waits for %s to be completed: %w", t.ID, strings.Join(open, ", "), ErrTaskBlocked)
			}
			if t.Owner == "" {
				t.Owner = agent
			}
		} else {
			t.Owner = ""
		}
		t.Status = status
		t.Note = note
		t.UpdatedAt = time.Now().UTC()
		task = *t
		if status == TaskCompleted {
			unblocked = unblockedBy(f, t.ID)
		}
		return nil
	})
	return task, unblocked, err
}

// unblockedBy lists the pending tasks waiting on id whose blockers are now all completed.
func unblockedBy(f *File, id string) []Task {
	var out []Task
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.Status == TaskPending && t.Owner == "" && slices.Contains(t.BlockedBy, id) && len(openBlockers(f, t)) == 0 {
			out = append(out, *t)
		}
	}
	return out
}

func notFound(id string) error {
	return fmt.Errorf("%w %q: task_list shows the ids", ErrTaskNotFound, id)
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}
