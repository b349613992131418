// Package workspace knows the directory an agentteam works in: where the
// .agentteam/ files live, whose they are, and how a path given by a model
// is confined to the workspace.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// StateDir is the name of the directory that holds everything agentteam writes.
const StateDir = ".agentteam"

// Workspace is one project directory. Root is absolute with symlinks resolved.
type Workspace struct {
	Root string
}

// Open resolves dir to an absolute, symlink-free path that must be an existing directory.
func Open(dir string) (*Workspace, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("workspace %s does not exist", abs)
		}
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", abs)
	}
	return &Workspace{Root: real}, nil
}

// Init creates the .agentteam/ layout if it is missing, and refuses one
// that agentteam must not trust, as CheckState does; one it may trust but
// has not claimed yet it claims (owner.go).
func (w *Workspace) Init() error {
	l := w.layout()
	if err := l.makeDirs(); err != nil {
		return err
	}
	if err := l.checkLinks(); err != nil {
		return err
	}
	o := w.owner()
	own, err := o.check()
	if err != nil {
		return err
	}
	if own != ownMine {
		return o.claim()
	}
	return o.writeIgnore()
}

// StatePath is .agentteam/ inside the workspace.
func (w *Workspace) StatePath() string { return filepath.Join(w.Root, StateDir) }

// InboxDir holds one NAME.jsonl per agent.
func (w *Workspace) InboxDir() string { return filepath.Join(w.StatePath(), "inbox") }

// TeamDir holds the registry.
func (w *Workspace) TeamDir() string { return filepath.Join(w.StatePath(), "team") }

// RegistryPath is team/config.json.
func (w *Workspace) RegistryPath() string { return filepath.Join(w.TeamDir(), "config.json") }

// SessionsDir holds each agent's conversation.
func (w *Workspace) SessionsDir() string { return filepath.Join(w.StatePath(), "sessions") }

// SessionPath is sessions/NAME.jsonl.
func (w *Workspace) SessionPath(name string) string {
	return filepath.Join(w.SessionsDir(), name+".jsonl")
}

// EventsPath is the team-wide event log.
func (w *Workspace) EventsPath() string { return filepath.Join(w.StatePath(), "events.jsonl") }

// TasksDir holds the shared task board.
func (w *Workspace) TasksDir() string { return filepath.Join(w.StatePath(), "tasks") }

// TasksPath is tasks/board.json.
func (w *Workspace) TasksPath() string { return filepath.Join(w.TasksDir(), "board.json") }

// WorktreesDir holds one git worktree per teammate spawned with isolation
// worktree; it is made only then (see MakeWorktreesDir).
func (w *Workspace) WorktreesDir() string { return filepath.Join(w.StatePath(), "worktrees") }

// WorktreePath is worktrees/NAME, a teammate's worktree.
func (w *Workspace) WorktreePath(name string) string { return filepath.Join(w.WorktreesDir(), name) }
