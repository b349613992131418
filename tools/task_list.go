package tools

import (
	"context"
	"fmt"
)

type taskListArgs struct{}

// newTaskList shows board, cut to outputCap bytes. It only reads the
// board, so it is parallel.
func newTaskList(board TaskBoard, outputCap int) Tool {
	return newTool(TaskListName,
		"Show the team's task board: each task's id, status (pending, in_progress, completed), owner, what it is blocked by, and subject.",
		func(ctx context.Context, _ taskListArgs) (Result, error) {
			text, err := board.ListTasks(ctx)
			if err != nil {
				return Result{}, fmt.Errorf("list tasks: %w", err)
			}
			return Text(truncateMiddle(text, outputCap)), nil
		}, parallel)
}
