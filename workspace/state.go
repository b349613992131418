package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// layout is the .agentteam/ directories and fixed state files, which
// agentteam makes and refuses to go through when one is a link or not
// what it made there. It is built from the workspace's paths as it is needed.
type layout struct {
	dirs      []string // the directories Init makes, parents first
	worktrees string   // worktrees/, made only for a teammate's worktree
	// files are the single state files at fixed places; each agent's
	// inbox and session file is refused at its own open (statefile.Open).
	files []string
}

// layout is w's .agentteam/ layout.
func (w *Workspace) layout() layout {
	return layout{
		dirs:      []string{w.StatePath(), w.InboxDir(), w.TeamDir(), w.SessionsDir(), w.TasksDir()},
		worktrees: w.WorktreesDir(),
		files:     []string{w.EventsPath(), w.RegistryPath(), w.TasksPath()},
	}
}

// CheckState refuses a .agentteam/ that agentteam must not trust: the
// directory or one of its directories is a symbolic link (a cloned
// repository could point it at any place, and agentteam would write there)
// or not a directory, a fixed state file is a link, or the state is not
// this user's (ForeignError, see owner.go). What does not exist yet is
// fine. It changes nothing, so read-only commands can call it.
func (w *Workspace) CheckState() error {
	if err := w.layout().checkLinks(); err != nil {
		return err
	}
	_, err := w.owner().check()
	return err
}

// checkLinks is CheckState's refusal of links and of what is not a
// directory or a regular file.
func (l layout) checkLinks() error {
	dirs := append(append([]string(nil), l.dirs...), l.worktrees)
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", d, err)
		}
		if err := checkStateDir(d, fi); err != nil {
			return err
		}
	}
	for _, f := range l.files {
		fi, err := os.Lstat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", f, err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; agentteam keeps its state only in real files: remove it", f)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file; agentteam keeps its state only in regular files: move it away", f)
		}
	}
	return nil
}

// checkStateDir refuses fi, the Lstat of the state directory d, unless it is a real directory.
func checkStateDir(d string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; agentteam keeps its state only in real directories: remove it", d)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory; agentteam needs a directory there: move it away", d)
	}
	return nil
}

// makeDirs creates the layout one directory at a time, parents first,
// refusing one that exists as a link instead of going through it.
func (l layout) makeDirs() error {
	for _, d := range l.dirs {
		err := os.Mkdir(d, 0o755)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", d, err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
		if err := checkStateDir(d, fi); err != nil {
			return err
		}
	}
	return nil
}

// MakeWorktreesDir creates .agentteam/worktrees/ when a first teammate gets
// a worktree, refusing one that is a link (git would make the worktree
// wherever it points).
func (w *Workspace) MakeWorktreesDir() error {
	if err := w.CheckState(); err != nil {
		return err
	}
	d := w.WorktreesDir()
	err := os.Mkdir(d, 0o755)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
		return nil
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("create %s: %w", d, err)
	}
	return checkStateDir(d, fi)
}
