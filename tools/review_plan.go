package tools

import (
	"context"
)

type reviewPlanArgs struct {
	RequestID string `json:"request_id" description:"The correlation_id of the plan_approval_request message."`
	Approve   bool   `json:"approve" description:"true lets the teammate start changing things; false sends it back to revise."`
	Feedback  string `json:"feedback,omitempty" description:"What to change (required when rejecting), or notes for the work."`
}

// newReviewPlan answers plan approval requests through p as agent (the lead).
func newReviewPlan(p Protocols, agent string) Tool {
	return newTool(ReviewPlanName,
		"Approve or reject a teammate's plan (a plan_approval_request message). Approval lets it write; a rejection with feedback makes it revise and resubmit.",
		func(ctx context.Context, a reviewPlanArgs) (Result, error) {
			if err := nonEmpty("request_id", a.RequestID); err != nil {
				return Errorf("%v", err), nil
			}
			if !a.Approve {
				if err := nonEmpty("feedback", a.Feedback); err != nil {
					return Errorf("a rejection needs feedback: %v", err), nil
				}
			}
			return textOrRefusal(p.ReviewPlan(ctx, agent, a.RequestID, a.Approve, a.Feedback))
		})
}
