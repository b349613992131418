package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/internal/config"
	"github.com/agentteam/agentteam/internal/permission"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/workspace"
)

// ReviewPlan answers a teammate's open plan request as the person.
func (e *teamEngine) ReviewPlan(ctx context.Context, name string, approve bool, feedback string) (string, error) {
	if err := workspace.ValidateTeammateName(name); err != nil {
		return "", err
	}
	id, ok := e.t.OpenPlanRequest(name)
	if !ok {
		return "", fmt.Errorf("%s has no plan waiting for review", name)
	}
	return e.t.ReviewPlan(ctx, workspace.UserName, id, approve, feedback)
}

// AnswerPermission answers an ask as the person; always first adds the
// ask's rule to the project file, so later runs allow it too.
func (e *teamEngine) AnswerPermission(_ context.Context, id string, approve, always bool, reason string) (string, error) {
	if always {
		rule := ""
		for _, a := range e.t.PendingPermissions() {
			if a.RequestID == id {
				rule = a.Rule
			}
		}
		r, err := permission.ParseRule(rule)
		if err != nil {
			return "", fmt.Errorf("there is no permission ask waiting with request id %q", id)
		}
		if err := config.AddAllowRule(e.t.Workspace().Root, r); err != nil {
			return "", err
		}
	}
	return e.t.AnswerPermission(workspace.UserName, id, approve, always, reason)
}

// Shutdown asks a teammate to shut down as the person.
func (e *teamEngine) Shutdown(ctx context.Context, name, reason string) (string, error) {
	if err := workspace.ValidateTeammateName(name); err != nil {
		return "", err
	}
	return e.t.RequestShutdown(ctx, workspace.UserName, name, reason)
}

// Tasks reads the task board.
func (e *teamEngine) Tasks(ctx context.Context) (string, error) {
	tasks, err := e.t.Board().List(ctx)
	if err != nil {
		return "", err
	}
	if len(tasks) == 0 {
		return "the task board is empty: agents add tasks with task_create", nil
	}
	var b strings.Builder
	if err := board.FormatTasks(&b, tasks); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}
