package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

type taskListArgs struct{}

type taskList struct{ env Env }

func (taskList) Name() string { return TaskListName }

func (taskList) Description() string {
	return "Show the team's task board: each task's id, status (pending, in_progress, completed), owner, what it is blocked by, and subject."
}

func (taskList) Params() any { return taskListArgs{} }

// Parallel: it only reads the board.
func (taskList) Parallel() bool { return true }

func (t taskList) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a taskListArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Tasks == nil {
		return Result{}, errors.New("no task board configured")
	}
	text, err := t.env.Tasks.ListTasks(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("list tasks: %w", err)
	}
	return Text(truncateMiddle(text, t.env.OutputCap)), nil
}
