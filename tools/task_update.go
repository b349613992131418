package tools

import (
	"context"
	"encoding/json"
	"errors"
)

type taskUpdateArgs struct {
	ID        string   `json:"id" description:"The task's id, e.g. t3."`
	Status    string   `json:"status,omitempty" enum:"pending,in_progress,completed" description:"completed: it is done (say the result in note); pending: give it back for someone else; in_progress: claim it."`
	Note      string   `json:"note,omitempty" description:"The result when completing (what was done, where), or why when giving it back."`
	BlockedBy []string `json:"blocked_by,omitempty" description:"Optional: replace the ids this pending task waits for ([] for none)."`
}

type taskUpdate struct{ env Env }

func (taskUpdate) Name() string { return TaskUpdateName }

func (taskUpdate) Description() string {
	return "Change a task on the board: complete it with a note on the result, release it (status pending), or change what a pending task is blocked by. Only its owner or the lead may complete or release it; completing unblocks the tasks waiting for it."
}

func (taskUpdate) Params() any { return taskUpdateArgs{} }

func (t taskUpdate) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a taskUpdateArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("id", a.ID); err != nil {
		return Errorf("%v", err), nil
	}
	switch a.Status {
	case "", "pending", "in_progress", "completed":
	default:
		return Errorf("status %q is not one of pending, in_progress, completed", a.Status), nil
	}
	if a.Status == "" && a.BlockedBy == nil {
		return Errorf("say what to change: a status, or blocked_by"), nil
	}
	if t.env.Tasks == nil {
		return Result{}, errors.New("no task board configured")
	}
	text, err := t.env.Tasks.UpdateTask(ctx, t.env.Agent, a.ID, a.Status, a.Note, a.BlockedBy)
	if err != nil {
		return Errorf("could not update %s: %v", a.ID, err), nil
	}
	return Text(text), nil
}
