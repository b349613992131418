//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxModuleDepth bounds how deep guardGit looks for submodules' git dirs
// (modules/a/b/c is depth 3).
const maxModuleDepth = 8

// gitReadOnly are the entries of a git dir a person's later git runs
// commands from: hooks; config and config.worktree (core.hooksPath,
// core.fsmonitor, filters, aliases); info/attributes (which filters
// apply); commondir (which config and hooks a worktree takes).
var gitReadOnly = []string{"config", "config.worktree", "hooks", "info", "commondir"}

// guardGit keeps what of each git dir in dirs a person's later git runs
// read-only (gitReadOnly), in the git dir itself and in each of its
// worktrees' (worktrees/NAME) and submodules' (modules/PATH), while the
// rest (objects, refs, index, HEAD) stays as writable as it was: a
// command's git add, commit, checkout and stash work. A git dir is guarded
// whatever it holds: one a command emptied (no HEAD) is still the
// person's. Each directory on the way is a mount point, so a command can
// neither rename nor remove it to put one of its own in its place (the
// kernel answers EBUSY).
func guardGit(dirs, writable []string) error {
	done := map[string]bool{}
	var guard func(gd string) error
	guard = func(gd string) error {
		if fi, err := os.Stat(gd); done[gd] || err != nil || !fi.IsDir() {
			return nil
		}
		done[gd] = true
		if err := pin(gd); err != nil {
			return err
		}
		// A missing one the command could make itself; made empty now,
		// it is bound read-only below like the others.
		if err := makeMissing(gd, writable); err != nil {
			return err
		}
		for _, name := range gitReadOnly {
			p := filepath.Join(gd, name)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			if err := bindReadOnly(p); err != nil {
				return fmt.Errorf("cannot protect %s: %w", p, err)
			}
		}
		// Each linked worktree's git dir is one as well.
		wts := filepath.Join(gd, "worktrees")
		if entries, err := os.ReadDir(wts); err == nil {
			if err := pin(wts); err != nil {
				return err
			}
			for _, e := range entries {
				if !e.IsDir() {
					continue // a link a command made: not git's
				}
				if err := guard(filepath.Join(wts, e.Name())); err != nil {
					return err
				}
			}
		}
		return guardModules(filepath.Join(gd, "modules"), guard, maxModuleDepth)
	}
	for _, gd := range dirs {
		if err := guard(gd); err != nil {
			return err
		}
	}
	return nil
}

// guardModules guards each submodule's git dir below dir, where it lies
// by the submodule's path (modules/lib/x), after pinning each directory on
// the way; depth bounds the search.
func guardModules(dir string, guard func(string) error, depth int) error {
	entries, err := os.ReadDir(dir)
	if err != nil || depth == 0 {
		return nil // none there
	}
	if err := pin(dir); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if looksLikeGitDir(sub) {
			err = guard(sub)
		} else {
			err = guardModules(sub, guard, depth-1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// looksLikeGitDir reports whether dir holds any of what a git dir does:
// one a command emptied of its HEAD still has the hooks bound there.
func looksLikeGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "config", "hooks", "objects"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// makeMissing makes the hooks and info directories of the git dir gd when
// it has none, and an empty config.worktree when its config mentions
// extensions.worktreeConfig (with it on, git reads that file too); only
// where a command could make them itself (in writable), and never through
// a symbolic link one may have put on the way.
func makeMissing(gd string, writable []string) error {
	real, err := filepath.EvalSymlinks(gd)
	if err != nil || !anyWithin(real, resolved(writable)) {
		return nil
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, real, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return fmt.Errorf("cannot protect %s: %w", gd, err)
	}
	defer unix.Close(fd)
	if _, err := os.Stat(filepath.Join(gd, "commondir")); err != nil {
		// A worktree's git dir takes hooks and info from its common dir.
		for _, name := range []string{"hooks", "info"} {
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && err != unix.EEXIST && !cannotWrite(err) {
				return fmt.Errorf("cannot make %s to protect it: %w", filepath.Join(gd, name), err)
			}
		}
	}
	if !worktreeConfig(gd) {
		return nil
	}
	f, err := unix.Openat(fd, "config.worktree", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	switch {
	case err == nil:
		return unix.Close(f)
	case err == unix.EEXIST || cannotWrite(err):
		return nil
	}
	return fmt.Errorf("cannot make %s to protect it: %w", filepath.Join(gd, "config.worktree"), err)
}

// cannotWrite reports whether err says the person may not write there, nor
// then may the command.
func cannotWrite(err error) bool {
	return err == unix.EACCES || err == unix.EPERM || err == unix.EROFS
}

// resolved is dirs with their symbolic links resolved, those there.
func resolved(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// worktreeConfig reports whether the config of gd's repository may turn on
// extensions.worktreeConfig: it names it at all.
func worktreeConfig(gd string) bool {
	config := filepath.Join(gd, "config")
	if b, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		common := string(bytes.TrimSpace(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		config = filepath.Join(common, "config")
	}
	b, _ := os.ReadFile(config)
	return bytes.Contains(bytes.ToLower(b), []byte("worktreeconfig"))
}

// pin makes dir a mount point of itself, writable as it was: rename(2) and
// rmdir(2) of a mount point fail with EBUSY.
func pin(dir string) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("cannot protect %s: %w", dir, err)
	}
	return nil
}

// anyWithin reports whether path is inside any of dirs.
func anyWithin(path string, dirs []string) bool {
	for _, d := range dirs {
		if within(path, d) {
			return true
		}
	}
	return false
}
