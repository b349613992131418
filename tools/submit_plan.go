package tools

import (
	"context"
	"encoding/json"
	"errors"
)

type submitPlanArgs struct {
	Plan string `json:"plan" description:"Your plan: the steps, the files you will change, how you will check the result."`
}

type submitPlan struct{ env Env }

func (submitPlan) Name() string { return SubmitPlanName }

func (submitPlan) Description() string {
	return "Send your plan to the lead for approval (plan mode). Until the lead approves it you may only read: " +
		"write_file, edit_file and bash commands that change things are refused. After submitting, end your turn; the answer arrives as a message."
}

func (submitPlan) Params() any { return submitPlanArgs{} }

func (t submitPlan) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a submitPlanArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("plan", a.Plan); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Protocols == nil {
		return Result{}, errors.New("no protocols configured")
	}
	out, err := t.env.Protocols.SubmitPlan(ctx, t.env.Agent, a.Plan)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Text(out), nil
}
