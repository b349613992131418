// Package registry is the team's registry: each teammate's entry (name,
// role, status, usage, plan, handoffs, worktree, worker) and the team's,
// their JSON, and the stores it is kept in (a file changed under a lock,
// a document changed by compare-and-set, or an entry per teammate). Every
// change is a read-modify-write that loses no other writer's. It knows
// nothing of running agents.
package registry
