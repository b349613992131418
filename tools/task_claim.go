package tools

import (
	"context"
)

type taskClaimArgs struct {
	ID string `json:"id" description:"The task's id, e.g. t3 (task_list shows them)."`
}

// newTaskClaim claims tasks on board for agent.
func newTaskClaim(board TaskBoard, agent string) Tool {
	return newTool(TaskClaimName,
		"Claim a pending task from the board: you become its owner and it is in_progress. Refused if someone else owns it or a task it is blocked by is not completed yet.",
		func(ctx context.Context, a taskClaimArgs) (Result, error) {
			if err := nonEmpty("id", a.ID); err != nil {
				return Errorf("%v", err), nil
			}
			text, err := board.ClaimTask(ctx, agent, a.ID)
			if err != nil {
				return Errorf("could not claim %s: %v", a.ID, err), nil
			}
			return Text(text), nil
		})
}
