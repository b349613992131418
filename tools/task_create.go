package tools

import (
	"context"
)

type taskCreateArgs struct {
	Subject     string   `json:"subject" description:"What is to be done, in a few words (at most 200 characters)."`
	Description string   `json:"description" description:"Everything the one who claims it needs to know: goal, files, how to tell it is done."`
	BlockedBy   []string `json:"blocked_by,omitempty" description:"Ids of tasks (e.g. t1) that must be completed before this one can be claimed."`
	Role        string   `json:"role,omitempty" description:"Optional: the role that should take it (e.g. tester); leave empty for anyone."`
}

// newTaskCreate adds tasks to board as agent.
func newTaskCreate(board TaskBoard, agent string) Tool {
	return newTool(TaskCreateName,
		"Add a pending task to the team's shared task board. Teammates claim tasks with task_claim; a task blocked by others can be claimed only once those are completed. Returns the new task's id.",
		func(ctx context.Context, a taskCreateArgs) (Result, error) {
			if err := nonEmpty("subject", a.Subject); err != nil {
				return Errorf("%v", err), nil
			}
			text, err := board.CreateTask(ctx, agent, TaskSpec{Subject: a.Subject, Description: a.Description, Role: a.Role, BlockedBy: a.BlockedBy})
			if err != nil {
				return Errorf("could not create the task: %v", err), nil
			}
			return Text("Created task " + text), nil
		})
}
