package tools

import (
	"context"
	"encoding/json"
	"errors"
)

type taskClaimArgs struct {
	ID string `json:"id" description:"The task's id, e.g. t3 (task_list shows them)."`
}

type taskClaim struct{ env Env }

func (taskClaim) Name() string { return TaskClaimName }

func (taskClaim) Description() string {
	return "Claim a pending task from the board: you become its owner and it is in_progress. Refused if someone else owns it or a task it is blocked by is not completed yet."
}

func (taskClaim) Params() any { return taskClaimArgs{} }

func (t taskClaim) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a taskClaimArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("id", a.ID); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Tasks == nil {
		return Result{}, errors.New("no task board configured")
	}
	text, err := t.env.Tasks.ClaimTask(ctx, t.env.Agent, a.ID)
	if err != nil {
		return Errorf("could not claim %s: %v", a.ID, err), nil
	}
	return Text(text), nil
}
