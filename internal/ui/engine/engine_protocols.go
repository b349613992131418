package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/board"
)

// ReviewPlan answers a teammate's open plan request as the person.
func (e *teamEngine) ReviewPlan(ctx context.Context, name string, approve bool, feedback string) (string, error) {
	return e.t.Protocols().ReviewPlanOf(ctx, name, approve, feedback)
}

// AnswerPermission answers an ask as the person; always first adds the
// ask's rule to the project file, so later runs allow it too.
func (e *teamEngine) AnswerPermission(ctx context.Context, id string, approve, always bool, reason string) (string, error) {
	if always {
		rule := ""
		for _, a := range e.t.Permissions().Pending() {
			if a.RequestID == id {
				rule = a.Rule
			}
		}
		r, err := permission.ParseRule(rule)
		if err != nil {
			return "", fmt.Errorf("there is no permission ask waiting with request id %q", id)
		}
		applies, err := config.AddAllowRule(os.Getenv, e.t.Workspace().Root, r)
		if err != nil {
			return "", err
		}
		if !applies {
			msg, err := e.t.Permissions().Answer(ctx, inbox.UserName, id, approve, always, reason)
			if err != nil {
				return "", err
			}
			return msg + "; later runs allow it only once you trust the project file (agentteam trust)", nil
		}
	}
	return e.t.Permissions().Answer(ctx, inbox.UserName, id, approve, always, reason)
}

// AllowForSession allows an ask and its prefix rule as the person while
// the team runs; nothing is written to the project file.
func (e *teamEngine) AllowForSession(ctx context.Context, id string) (string, error) {
	return e.t.Permissions().AllowForSession(ctx, id)
}

// Shutdown asks a teammate to shut down as the person.
func (e *teamEngine) Shutdown(ctx context.Context, name, reason string) (string, error) {
	if err := inbox.ValidateTeammateName(name); err != nil {
		return "", err
	}
	return e.t.Protocols().RequestShutdown(ctx, inbox.UserName, name, reason)
}

// Merge merges a teammate's branch as the person.
func (e *teamEngine) Merge(ctx context.Context, name string) (string, error) {
	if err := inbox.ValidateTeammateName(name); err != nil {
		return "", err
	}
	rep, err := e.t.MergeAs(ctx, inbox.UserName, name)
	if err != nil {
		return "", err
	}
	if len(rep.Conflicts) > 0 {
		return "", errors.New(rep.Text())
	}
	return rep.Text(), nil
}

// maxDiffBytes bounds the diff /diff shows; agentteam diff NAME has it all.
const maxDiffBytes = 20000

// Diff is a teammate's diffstat and patch against the merge base.
func (e *teamEngine) Diff(ctx context.Context, name string) (string, error) {
	if err := inbox.ValidateTeammateName(name); err != nil {
		return "", err
	}
	stat, uncommitted, err := e.t.Worktrees().Diff(ctx, name, true)
	if err != nil {
		return "", err
	}
	patch, _, err := e.t.Worktrees().Diff(ctx, name, false)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(patch) == "" {
		stat = name + "'s branch has no changes against the merge base\n"
	}
	if len(patch) > maxDiffBytes {
		patch = patch[:maxDiffBytes] + "\n… (cut: agentteam diff " + name + " prints it all)\n"
	}
	text := stat + "\n" + patch
	if len(uncommitted) > 0 {
		text += fmt.Sprintf("\nnot committed yet (committed when %s reports): %s", name, strings.Join(uncommitted, ", "))
	}
	return strings.TrimRight(text, "\n"), nil
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
