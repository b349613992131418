package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/inbox"
)

type spawnTeammateArgs struct {
	Name   string `json:"name" description:"Unique teammate name: 1-32 characters of letters, digits, '_' or '-', not starting with '-'; 'lead' and 'user' are reserved."`
	Role   string `json:"role" description:"Short role, e.g. 'programmer', 'tester', 'reviewer'."`
	Prompt string `json:"prompt" description:"The teammate's task: everything it needs to know, since it cannot see your conversation."`
	// PlanMode is optional: omitempty keeps it out of the required fields.
	PlanMode bool   `json:"plan_mode,omitempty" description:"If true, the teammate may only read until it submits a plan and you approve it with review_plan."`
	Model    string `json:"model,omitempty" description:"Optional: one of the configured models (listed in your instructions), as 'model' or 'provider/model'. Omitted: the role's configured model, else the default."`
	Provider string `json:"provider,omitempty" description:"Optional: the configured provider of model. Omitted: the provider named in model, else the default."`
	// Isolation is optional too: "" is the team's default.
	Isolation string `json:"isolation,omitempty" enum:"worktree,none" description:"Where the teammate works: 'worktree' gives it its own git worktree on branch agentteam/NAME, made from your HEAD (merge it back with merge_teammate); 'none' shares your working directory. Default: the team's setting."`
	// Labels are optional: a team on one machine ignores them.
	Labels []string `json:"labels,omitempty" description:"Optional, for a team with workers on several hosts: only a worker started with all these labels (e.g. gpu, linux) runs the teammate. Omitted: the role's configured labels, else any worker."`
}

// newSpawnTeammate spawns into team. Spawns only enqueue work, so several
// in one turn are independent: it is parallel.
func newSpawnTeammate(team TeamManager) Tool {
	return newTool(SpawnTeammateName,
		"Create a teammate agent with a name, a role and a task prompt, and start it. "+
			"It works on its own and sends its final result to your inbox; you can message it by name.",
		func(ctx context.Context, a spawnTeammateArgs) (Result, error) {
			if err := inbox.ValidateTeammateName(a.Name); err != nil {
				return Errorf("%v", err), nil
			}
			if err := nonEmpty("role", a.Role); err != nil {
				return Errorf("%v", err), nil
			}
			if err := nonEmpty("prompt", a.Prompt); err != nil {
				return Errorf("%v", err), nil
			}
			if a.Isolation != "" && a.Isolation != "worktree" && a.Isolation != "none" {
				return Errorf("isolation %q is not one of worktree or none", a.Isolation), nil
			}
			for _, l := range a.Labels {
				if err := CheckLabel(l); err != nil {
					return Errorf("%v", err), nil
				}
			}
			if team == nil {
				return Result{}, errors.New("no team manager configured")
			}
			spec := SpawnSpec{Name: a.Name, Role: a.Role, Prompt: a.Prompt, PlanMode: a.PlanMode,
				Model: strings.TrimSpace(a.Model), Provider: strings.TrimSpace(a.Provider), Isolation: a.Isolation, Labels: a.Labels}
			if err := team.SpawnTeammate(ctx, spec); err != nil {
				return Errorf("could not spawn %s: %v", a.Name, err), nil
			}
			if a.PlanMode {
				return Text(sprintf("Spawned teammate %s (%s) in plan mode: it will send you a plan to approve or reject with review_plan before it may change anything.", a.Name, a.Role)), nil
			}
			return Text(sprintf("Spawned teammate %s (%s). It starts when a worker is free and will report its result to your inbox.", a.Name, a.Role)), nil
		}, parallel)
}

// CheckLabel refuses a placement label that is not a short word of
// letters, digits, '-', '_' or '.': labels are compared as given, and shown.
func CheckLabel(l string) error {
	if l == "" || len(l) > 32 {
		return fmt.Errorf("label %q: use 1 to 32 letters, digits, '-', '_' or '.'", l)
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("label %q: use 1 to 32 letters, digits, '-', '_' or '.'", l)
		}
	}
	return nil
}
