package team

import (
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// The teammates' git worktrees live in team/worktree; these names keep
// the team's API as it was for its callers.

type (
	Worktrees   = worktree.Worktrees
	MergeReport = worktree.MergeReport
)

const (
	IsolationNone     = worktree.IsolationNone
	IsolationWorktree = worktree.IsolationWorktree
	BranchPrefix      = worktree.BranchPrefix
)

// CheckIsolation refuses an isolation no teammate can be spawned with.
func CheckIsolation(iso string) error { return worktree.CheckIsolation(iso) }

// NewWorktrees gives the worktrees of ws, recorded in reg (worktree.New).
func NewWorktrees(ws *workspace.Workspace, reg worktree.Registry, events worktree.Events) *Worktrees {
	return worktree.New(ws, reg, events)
}
