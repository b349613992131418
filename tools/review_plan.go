package tools

import (
	"context"
	"encoding/json"
	"errors"
)

type reviewPlanArgs struct {
	RequestID string `json:"request_id" description:"The correlation_id of the plan_approval_request message."`
	Approve   bool   `json:"approve" description:"true lets the teammate start changing things; false sends it back to revise."`
	Feedback  string `json:"feedback,omitempty" description:"What to change (required when rejecting), or notes for the work."`
}

type reviewPlan struct{ env Env }

func (reviewPlan) Name() string { return ReviewPlanName }

func (reviewPlan) Description() string {
	return "Approve or reject a teammate's plan (a plan_approval_request message). Approval lets it write; a rejection with feedback makes it revise and resubmit."
}

func (reviewPlan) Params() any { return reviewPlanArgs{} }

func (t reviewPlan) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a reviewPlanArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("request_id", a.RequestID); err != nil {
		return Errorf("%v", err), nil
	}
	if !a.Approve {
		if err := nonEmpty("feedback", a.Feedback); err != nil {
			return Errorf("a rejection needs feedback: %v", err), nil
		}
	}
	if t.env.Protocols == nil {
		return Result{}, errors.New("no protocols configured")
	}
	out, err := t.env.Protocols.ReviewPlan(ctx, t.env.Agent, a.RequestID, a.Approve, a.Feedback)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Text(out), nil
}
