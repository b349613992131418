package tools

import (
	"context"
)

type taskUpdateArgs struct {
	ID        string   `json:"id" description:"The task's id, e.g. t3."`
	Status    string   `json:"status,omitempty" enum:"pending,in_progress,completed" description:"completed: it is done (say the result in note); pending: give it back for someone else; in_progress: claim it."`
	Note      string   `json:"note,omitempty" description:"The result when completing (what was done, where), or why when giving it back."`
	BlockedBy []string `json:"blocked_by,omitempty" description:"Optional: replace the ids this pending task waits for ([] for none)."`
}

// newTaskUpdate changes tasks on board as agent.
func newTaskUpdate(board TaskBoard, agent string) Tool {
	return newTool(TaskUpdateName,
		"Change a task on the board: complete it with a note on the result, release it (status pending), or change what a pending task is blocked by. Only its owner or the lead may complete or release it; completing unblocks the tasks waiting for it.",
		func(ctx context.Context, a taskUpdateArgs) (Result, error) {
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
			text, err := board.UpdateTask(ctx, agent, a.ID, a.Status, a.Note, a.BlockedBy)
			if err != nil {
				return Errorf("could not update %s: %v", a.ID, err), nil
			}
			return Text(text), nil
		})
}
