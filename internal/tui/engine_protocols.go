package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// Shutdown asks a teammate to shut down as the person.
func (e *teamEngine) Shutdown(ctx context.Context, name, reason string) (string, error) {
	if err := workspace.ValidateTeammateName(name); err != nil {
		return "", err
	}
	return e.t.RequestShutdown(ctx, workspace.UserName, name, reason)
}

// Merge merges a teammate's branch as the person.
func (e *teamEngine) Merge(ctx context.Context, name string) (string, error) {
	if err := workspace.ValidateTeammateName(name); err != nil {
		return "", err
	}
	rep, err := e.t.MergeAs(ctx, workspace.UserName, name)
	if err != nil {
		return "", err
	}
	if len(rep.Conflicts) > 0 {
		return "", errors.New(rep.Text())
	}
	return rep.Text(), nil
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
