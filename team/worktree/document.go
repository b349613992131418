// Package worktree gives teammates their own git worktrees: one per
// teammate, on the branch agentteam/NAME from the lead's commit, committed
// when the teammate reports, merged into the lead's branch on request,
// pushed and fetched through the team's git remote when the teammate runs
// on another host, and cleaned up once merged. It records what it did in
// the registry and says it as events; git itself runs through
// internal/sys/gitwt, which runs nothing a repository names.
package worktree
