// Package gitwt runs the git CLI for agentteam's worktrees: one worktree
// and branch per teammate, made from the lead's HEAD, committed, merged
// back with --no-ff, and removed once merged. It knows nothing of agents.
//
// A Repo is the lead's main work tree and its branches: HEAD, merges,
// diffs, and the worktrees it adds, finds and removes (gitwt.go,
// branch.go, worktree.go). A Worktree runs git in one teammate's
// worktree: status, commit, merge. Repo.Remotes is the network half:
// push, fetch and refs on the team's git remote (remote.go).
//
// agentteam's own git never runs what a model wrote (neutral.go): hooks,
// fsmonitor, pagers, editors, signing and external diffs are off on every
// command, and each filter, diff or merge driver, credential helper or ssh
// command the repository configures is set back to a harmless value;
// push and fetch name git's own upload and receive-pack. Git's
// environment is an allowlist without the model's key or any secret, and
// git runs in a process group killed at its deadline (exec.go). Every
// repository is addressed by its recorded git directory and work tree
// (--git-dir, --work-tree), never through a .git file a teammate could
// rewrite nor a core.worktree it could set.
package gitwt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoGit is returned when the git program cannot be found.
var ErrNoGit = errors.New("git is not installed (or not on PATH)")

// ErrNotRepo is returned for a directory that is not in a git repository.
var ErrNotRepo = errors.New("not a git repository")

// ErrNoCommit is returned for a repository whose HEAD has no commit yet.
var ErrNoCommit = errors.New("the repository has no commit yet")

// identity is the author and committer agentteam uses where git has none
// configured, so a commit never fails for want of a user.email.
var identity = []string{
	"GIT_AUTHOR_NAME=agentteam", "GIT_AUTHOR_EMAIL=agentteam@localhost",
	"GIT_COMMITTER_NAME=agentteam", "GIT_COMMITTER_EMAIL=agentteam@localhost",
}

// Repo is the git repository a workspace lies in.
type Repo struct {
	// Top is the main work tree's root (symlinks resolved); CommonDir is
	// the repository's git directory shared by all its worktrees.
	Top, CommonDir string
	gitDir         string   // Top's own git directory
	remotes        *Remotes // its network half
}

// Open finds the repository that dir lies in.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	out, err := run(ctx, dir, nil, "rev-parse", "--show-toplevel", "--git-common-dir", "--absolute-git-dir")
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			return nil, ErrNotRepo
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return nil, ErrNotRepo // a bare repository, or the inside of .git
	}
	top, err := filepath.EvalSymlinks(lines[0])
	if err != nil {
		return nil, fmt.Errorf("git top level %s: %w", lines[0], err)
	}
	common := lines[1]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	if common, err = filepath.EvalSymlinks(common); err != nil {
		return nil, fmt.Errorf("git directory: %w", err)
	}
	gitDir, err := filepath.EvalSymlinks(lines[2])
	if err != nil {
		return nil, fmt.Errorf("git directory: %w", err)
	}
	if err := ownsWorkTree(top, gitDir); err != nil {
		return nil, err
	}
	r := &Repo{Top: top, CommonDir: common, gitDir: gitDir}
	r.remotes = &Remotes{repo: r}
	return r, nil
}

// ownsWorkTree checks that top's .git is gitDir: a core.worktree in the
// repository's config must not have moved the work tree git writes to
// (merges, checkouts) somewhere else.
func ownsWorkTree(top, gitDir string) error {
	dotgit := filepath.Join(top, ".git")
	target := dotgit
	if fi, err := os.Stat(dotgit); err == nil && fi.Mode().IsRegular() {
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return fmt.Errorf("read %s: %w", dotgit, err)
		}
		target = strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
		if !filepath.IsAbs(target) {
			target = filepath.Join(top, target)
		}
	}
	if real, err := filepath.EvalSymlinks(target); err != nil || real != gitDir {
		return fmt.Errorf("the work tree git names, %s, is not the one of its git directory %s (core.worktree?); agentteam will not use it", top, gitDir)
	}
	return nil
}

// Remotes is the network half of the repository: push, fetch and its
// remotes' refs.
func (r *Repo) Remotes() *Remotes { return r.remotes }

// where addresses the main work tree by its recorded directories.
func (r *Repo) where() []string {
	return []string{"--git-dir=" + r.gitDir, "--work-tree=" + r.Top}
}

// top runs git in the main work tree.
func (r *Repo) top(ctx context.Context, env []string, args ...string) (string, error) {
	return runGit(ctx, r.Top, r.where(), env, false, nil, args)
}

// Head is the commit HEAD names in the main work tree.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.top(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil || strings.TrimSpace(out) == "" {
		return "", ErrNoCommit
	}
	return strings.TrimSpace(out), nil
}

// CurrentBranch is the main work tree's branch, or its commit's short
// hash when HEAD is detached (a name a teammate can merge from too).
func (r *Repo) CurrentBranch(ctx context.Context) string {
	out, err := r.top(ctx, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err == nil {
		return strings.TrimSpace(out)
	}
	if out, err = r.top(ctx, nil, "rev-parse", "--short", "HEAD"); err == nil {
		return strings.TrimSpace(out)
	}
	return "HEAD"
}

// Exclude adds pattern to the repository's info/exclude unless a line
// says it already, so agentteam's state never shows in `git status` nor
// gets committed.
func (r *Repo) Exclude(pattern string) error {
	path := filepath.Join(r.CommonDir, "info", "exclude")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	add := pattern + "\n"
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		add = "\n" + add
	}
	_, werr := f.WriteString(add)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// identityEnv is the author and committer for a commit where git has
// none configured (an unset user.email would fail the commit).
func (r *Repo) identityEnv(ctx context.Context) []string {
	if out, err := r.top(ctx, nil, "config", "user.email"); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	return identity
}
