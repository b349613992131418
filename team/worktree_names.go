package team

import (
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// The teammates' git worktrees live in team/worktree; these names keep
// the team's API as it was for its callers.

//go:fix inline
type (
	Worktrees   = worktree.Worktrees
	MergeReport = worktree.MergeReport
)

//go:fix inline
const (
	IsolationNone     = worktree.IsolationNone
	IsolationWorktree = worktree.IsolationWorktree
	BranchPrefix      = worktree.BranchPrefix
)

// CheckIsolation refuses an isolation no teammate can be spawned with.
//
//go:fix inline
func CheckIsolation(iso string) error { return worktree.CheckIsolation(iso) }

// NewWorktrees gives the worktrees of ws, recorded in reg (worktree.New).
//
//go:fix inline
func NewWorktrees(ws *workspace.Workspace, reg worktree.Registry, events worktree.Events) *worktree.Worktrees {
	return worktree.New(ws, reg, events)
}
