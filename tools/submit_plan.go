package tools

import (
	"context"
)

type submitPlanArgs struct {
	Plan string `json:"plan" description:"Your plan: the steps, the files you will change, how you will check the result."`
}

// newSubmitPlan sends agent's plan to the lead through p.
func newSubmitPlan(p Protocols, agent string) Tool {
	return newTool(SubmitPlanName,
		"Send your plan to the lead for approval (plan mode). Until the lead approves it you may only read: "+
			"write_file, edit_file and bash commands that change things are refused. After submitting, end your turn; the answer arrives as a message.",
		func(ctx context.Context, a submitPlanArgs) (Result, error) {
			if err := nonEmpty("plan", a.Plan); err != nil {
				return Errorf("%v", err), nil
			}
			return textOrRefusal(p.SubmitPlan(ctx, agent, a.Plan))
		})
}
