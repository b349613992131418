package team

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/workspace"
)

// OpenPlanRequest is the id of a teammate's plan waiting for review, so the
// person can approve or reject it by the teammate's name.
func (t *Team) OpenPlanRequest(name string) (id string, ok bool) {
	id = t.requests.OpenFor(event.RequestPlanApproval, name)
	return id, id != ""
}

// ReviewPlanOf answers, as the person, the plan teammate name waits with.
func (t *Team) ReviewPlanOf(ctx context.Context, name string, approve bool, feedback string) (string, error) {
	if err := workspace.ValidateTeammateName(name); err != nil {
		return "", err
	}
	if err := CheckRecipient(t.Registry(), name); err != nil {
		return "", err // no such teammate: not "nobody has no plan waiting"
	}
	id, ok := t.OpenPlanRequest(name)
	if !ok {
		return "", fmt.Errorf("%s has no plan waiting for review", name)
	}
	return t.ReviewPlan(ctx, workspace.UserName, id, approve, feedback)
}
