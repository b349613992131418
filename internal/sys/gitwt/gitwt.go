// Package gitwt runs the git CLI for agentteam's worktrees: one worktree
// and branch per teammate, made from the lead's HEAD, committed, merged
// back with --no-ff, and removed once merged. It knows nothing of agents.
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
	"slices"
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
	gitDir         string // Top's own git directory
}

// Worktree is one linked worktree of a Repo.
type Worktree struct {
	// Path is its work tree; GitDir its own git directory
	// (CommonDir/worktrees/NAME); Branch its branch's short name.
	Path, GitDir, Branch string
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
	return &Repo{Top: top, CommonDir: common, gitDir: gitDir}, nil
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

// BranchExists reports whether refs/heads/branch exists.
func (r *Repo) BranchExists(ctx context.Context, branch string) bool {
	_, err := r.top(ctx, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// Add makes a worktree at path on branch: a new branch from HEAD, or the
// branch as it is when it exists already (a teammate back after its
// worktree was removed keeps its unmerged work).
func (r *Repo) Add(ctx context.Context, path, branch string) (*Worktree, error) {
	return r.AddFrom(ctx, path, branch, "")
}

// AddFrom is Add with a new branch made from the commit start ("" for
// HEAD); start must be a full commit id (IsCommitID) this repository has.
func (r *Repo) AddFrom(ctx context.Context, path, branch, start string) (*Worktree, error) {
	if _, err := r.Head(ctx); err != nil {
		return nil, err
	}
	if start == "" {
		start = "HEAD"
	} else if !IsCommitID(start) {
		return nil, fmt.Errorf("%.80q is no commit id to start a branch from", start)
	}
	// No checkout here: git would check out under config conditions
	// (includeIf onbranch) read for the new branch, not for the lead's.
	args := []string{"worktree", "add", "--quiet", "--no-checkout"}
	if r.BranchExists(ctx, branch) {
		args = append(args, path, branch)
	} else {
		args = append(args, "-b", branch, path, start)
	}
	if _, err := r.top(ctx, nil, args...); err != nil {
		return nil, err
	}
	w, err := r.Find(ctx, path)
	if err != nil {
		return nil, err
	}
	if _, err := r.wt(ctx, w, nil, "reset", "--hard", "--quiet"); err != nil {
		return nil, err
	}
	return w, nil
}

// Find returns the worktree registered at path, or an error when git knows
// none there (it was removed, or never made).
func (r *Repo) Find(ctx context.Context, path string) (*Worktree, error) {
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("worktree %s: %w", path, err)
	}
	out, err := r.top(ctx, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	for _, block := range strings.Split(out, "\n\n") {
		var wt Worktree
		for _, line := range strings.Split(block, "\n") {
			switch k, v, _ := strings.Cut(line, " "); k {
			case "worktree":
				wt.Path = v
			case "branch":
				wt.Branch = strings.TrimPrefix(v, "refs/heads/")
			}
		}
		if real, err := filepath.EvalSymlinks(wt.Path); err != nil || real != want {
			continue
		}
		wt.Path = want
		// The admin directory is found from the main repository, never from
		// the .git file inside the worktree.
		gd, err := r.adminDir(want)
		if err != nil {
			return nil, err
		}
		wt.GitDir = gd
		return &wt, nil
	}
	return nil, fmt.Errorf("git knows no worktree at %s", path)
}

// adminDir is the directory under CommonDir/worktrees whose gitdir file
// points at the worktree path.
func (r *Repo) adminDir(path string) (string, error) {
	base := filepath.Join(r.CommonDir, "worktrees")
	entries, err := os.ReadDir(base)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", base, err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(base, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		// gitdir holds the path of the worktree's .git file.
		dotgit := filepath.Clean(strings.TrimSpace(string(data)))
		if real, err := filepath.EvalSymlinks(filepath.Dir(dotgit)); err == nil && real == path {
			return filepath.Join(base, e.Name()), nil
		}
	}
	return "", fmt.Errorf("no git administrative directory for the worktree %s", path)
}

// Remove removes the worktree (refusing one with changes unless force).
// The check is agentteam's own: git's would run status in every
// repository nested in the worktree.
func (r *Repo) Remove(ctx context.Context, wt *Worktree, force bool) error {
	if !force {
		changes, err := r.Changes(ctx, wt)
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			return fmt.Errorf("git worktree remove: %s has changes (%s)", wt.Path, strings.Join(firstN(changes, 5), ", "))
		}
	}
	_, err := r.top(ctx, nil, "worktree", "remove", "--force", wt.Path)
	return err
}

// firstN is s cut to its first n elements.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// DeleteBranch deletes a branch that is merged into HEAD (git branch -d).
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	_, err := r.top(ctx, nil, "branch", "-d", branch)
	return err
}

// IsMerged reports whether branch's tip is reachable from the main work
// tree's HEAD.
func (r *Repo) IsMerged(ctx context.Context, branch string) bool {
	_, err := r.top(ctx, nil, "merge-base", "--is-ancestor", "refs/heads/"+branch, "HEAD")
	return err == nil
}

// Dirty lists the main work tree's tracked files with uncommitted changes.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := r.top(ctx, nil, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all", "-z")
	if err != nil {
		return nil, err
	}
	return porcelainPaths(out), nil
}

// MergeResult is what a merge did.
type MergeResult struct {
	// Conflicts are the files that conflicted; the merge was then aborted.
	Conflicts []string
	// UpToDate: the branch had nothing HEAD lacks.
	UpToDate bool
	// Stat is the merge's diffstat summary line.
	Stat string
}

// Merge merges branch into the main work tree's HEAD with a merge commit.
// A conflict is aborted, so the tree is as it was, and reported in the
// result; any other failure is an error with git's words.
func (r *Repo) Merge(ctx context.Context, branch, message string) (MergeResult, error) {
	if r.IsMerged(ctx, branch) {
		return MergeResult{UpToDate: true}, nil
	}
	before, err := r.Head(ctx)
	if err != nil {
		return MergeResult{}, err
	}
	_, merr := r.top(ctx, r.identityEnv(ctx), "merge", "--no-ff", "--no-edit", "-m", message, "refs/heads/"+branch)
	if merr == nil {
		stat, _ := r.ShortStat(ctx, before, "HEAD")
		return MergeResult{Stat: stat}, nil
	}
	out, err := r.top(ctx, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--name-only", "--diff-filter=U", "-z")
	conflicts := splitZ(out)
	if err != nil || len(conflicts) == 0 {
		r.abortMerge(ctx)
		return MergeResult{}, merr
	}
	if err := r.abortMerge(ctx); err != nil {
		return MergeResult{Conflicts: conflicts}, fmt.Errorf("the merge conflicted and could not be aborted: %w", err)
	}
	return MergeResult{Conflicts: conflicts}, nil
}

// MergeInto merges rev into the worktree's branch, so the teammate can
// resolve a conflict by editing files alone (no git of its own, no write
// to the repository's git directory). A conflict is left in place, files
// marked, for the teammate to resolve: its next commit (CommitAll)
// concludes the merge. Any other failure is aborted and an error.
func (r *Repo) MergeInto(ctx context.Context, w *Worktree, rev, message string) (conflicts []string, err error) {
	_, merr := r.wt(ctx, w, r.identityEnv(ctx), "merge", "--no-ff", "--no-edit", "-m", message, rev)
	if merr == nil {
		return nil, nil
	}
	out, err := r.wt(ctx, w, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--name-only", "--diff-filter=U", "-z")
	if conflicts = splitZ(out); err == nil && len(conflicts) > 0 {
		return conflicts, nil
	}
	if _, serr := os.Stat(filepath.Join(w.GitDir, "MERGE_HEAD")); serr == nil {
		_, _ = r.wt(ctx, w, nil, "merge", "--abort")
	}
	return nil, merr
}

func (r *Repo) abortMerge(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(r.gitDir, "MERGE_HEAD")); err != nil {
		return nil
	}
	_, err := r.top(ctx, nil, "merge", "--abort")
	return err
}

// ShortStat is git diff --shortstat from..to ("" when nothing differs).
func (r *Repo) ShortStat(ctx context.Context, from, to string) (string, error) {
	out, err := r.top(ctx, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--shortstat", from, to)
	return strings.TrimSpace(out), err
}

// maxStatFiles bounds the per-file lines of BranchStat.
const maxStatFiles = 40

// BranchStat is the diffstat of branch against its merge base with HEAD
// (what merging it would bring): the summary line and the per-file lines.
func (r *Repo) BranchStat(ctx context.Context, branch string) (summary, files string, err error) {
	out, err := r.top(ctx, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--stat", "HEAD...refs/heads/"+branch)
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return "", "", nil
	}
	summary, per := strings.TrimSpace(lines[len(lines)-1]), lines[:len(lines)-1]
	if len(per) > maxStatFiles {
		// A result message has a size limit; the summary counts them all.
		per = append(per[:maxStatFiles:maxStatFiles], fmt.Sprintf(" … and %d more files", len(per)-maxStatFiles))
	}
	return summary, strings.Join(per, "\n"), nil
}

// BranchDiff is the patch of branch against its merge base with HEAD.
func (r *Repo) BranchDiff(ctx context.Context, branch string, stat bool) (string, error) {
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}
	if stat {
		args = append(args, "--stat")
	}
	return r.top(ctx, nil, append(args, "HEAD...refs/heads/"+branch)...)
}

// wt runs git in a teammate's worktree by its recorded directories.
func (r *Repo) wt(ctx context.Context, w *Worktree, env []string, args ...string) (string, error) {
	where := []string{"--git-dir=" + w.GitDir, "--work-tree=" + w.Path}
	return runGit(ctx, w.Path, where, env, false, nil, args)
}

// Changes lists the worktree's uncommitted changes, untracked files included.
func (r *Repo) Changes(ctx context.Context, w *Worktree) ([]string, error) {
	out, err := r.wt(ctx, w, nil, "status", "--porcelain", "--ignore-submodules=all", "-z")
	if err != nil {
		return nil, err
	}
	return porcelainPaths(out), nil
}

// CommitAll commits every change in the worktree (git add -A, git commit)
// on its branch with message. It reports false when there was nothing to
// commit. A worktree in a merge whose files still hold conflict markers is
// not committed: that would record the markers as the resolution.
func (r *Repo) CommitAll(ctx context.Context, w *Worktree, message string) (bool, error) {
	changes, err := r.Changes(ctx, w)
	if err != nil {
		return false, err
	}
	inMerge := false
	if _, err := os.Stat(filepath.Join(w.GitDir, "MERGE_HEAD")); err == nil {
		inMerge = true // a merge the teammate did not commit: conclude it if resolved
	}
	if len(changes) == 0 && !inMerge {
		return false, nil
	}
	if inMerge {
		if marked := withMarkers(w.Path, changes); len(marked) > 0 {
			return false, fmt.Errorf("unresolved merge conflicts in %s", strings.Join(marked, ", "))
		}
	}
	if _, err := r.wt(ctx, w, nil, "add", "-A"); err != nil {
		return false, err
	}
	if _, err := r.wt(ctx, w, r.identityEnv(ctx), "commit", "--quiet", "--no-verify", "-m", message); err != nil {
		return false, err
	}
	return true, nil
}

// withMarkers are the files among paths (relative to dir) that hold a
// line git writes around a conflict.
func withMarkers(dir string, paths []string) []string {
	var marked []string
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			continue // deleted, or a directory
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") {
				marked = append(marked, p)
				break
			}
		}
	}
	return marked
}

// identityEnv is the author and committer for a commit where git has
// none configured (an unset user.email would fail the commit).
func (r *Repo) identityEnv(ctx context.Context) []string {
	if out, err := r.top(ctx, nil, "config", "user.email"); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	return identity
}

// porcelainPaths are the paths of `git status --porcelain -z` output (the
// original path of a rename is its own NUL-separated field and skipped).
func porcelainPaths(out string) []string {
	var paths []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the source path follows
		}
	}
	slices.Sort(paths)
	return paths
}

func splitZ(out string) []string {
	var s []string
	for _, f := range strings.Split(out, "\x00") {
		if f = strings.TrimSpace(f); f != "" {
			s = append(s, f)
		}
	}
	return s
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "; ")
}

// A teammate run by a worker on another host has its branch in the
// worker's clone: the worker pushes it to the team's git remote, and the
// lead fetches it from there into its own repository. Both ends name the
// remote as configured in their own repository, never a URL handed over
// by another process; network commands run with the safety settings, no
// ext:: transport, no submodules, and without the model API key's
// variables in their environment.

// netSafety are the -c settings of push and fetch, on top of safety.
var netSafety = []string{"-c", "protocol.ext.allow=never", "-c", "submodule.recurse=false", "-c", "push.gpgSign=false"}

// ErrNoRemote is returned for a remote name the repository does not configure.
var ErrNoRemote = errors.New("no such git remote")

// Remotes are the repository's remotes and their fetch URLs, by name.
func (r *Repo) Remotes(ctx context.Context) (map[string]string, error) {
	out, err := r.top(ctx, nil, "config", "--null", "--get-regexp", `^remote\..*\.url$`)
	if err != nil {
		if strings.TrimSpace(out) == "" && !strings.Contains(err.Error(), "fatal") {
			return map[string]string{}, nil // exit 1: none configured
		}
		return nil, err
	}
	remotes := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		key, url, ok := strings.Cut(rec, "\n")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".url")
		if validRemoteName(name) {
			remotes[name] = url
		}
	}
	return remotes, nil
}

// validRemoteName: a name git could take for an option is never used.
func validRemoteName(name string) bool {
	return name != "" && name[0] != '-' && !strings.ContainsAny(name, "\x00\n")
}

// PushURL is the URL a push to the named remote goes to.
func (r *Repo) PushURL(ctx context.Context, remote string) (string, error) {
	if !validRemoteName(remote) {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	remotes, err := r.Remotes(ctx)
	if err != nil {
		return "", err
	}
	if _, ok := remotes[remote]; !ok {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	out, err := r.top(ctx, nil, "remote", "get-url", "--push", remote)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// BranchCommit is the commit refs/heads/branch names ("" when none).
func (r *Repo) BranchCommit(ctx context.Context, branch string) string {
	out, err := r.top(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// IsAncestor reports whether commit a is b or an ancestor of b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) bool {
	_, err := r.top(ctx, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Push pushes refs/heads/branch to the same branch on the named remote,
// never forced, and returns the commit pushed. dropEnv names variables
// (the model API key's) the git process must not have.
func (r *Repo) Push(ctx context.Context, remote, branch string, dropEnv []string) (string, error) {
	url, err := r.PushURL(ctx, remote)
	if err != nil {
		return "", err
	}
	commit := r.BranchCommit(ctx, branch)
	if commit == "" {
		return "", fmt.Errorf("no branch %s to push", branch)
	}
	ref := "refs/heads/" + branch
	_, err = r.runNet(ctx, dropEnv, url, "push", "--quiet", "--no-verify", "--recurse-submodules=no",
		remote, commit+":"+ref)
	if err != nil {
		return "", errors.New(RedactIn(pushFailure(err.Error()), url))
	}
	return commit, nil
}

// pushFailure is what went wrong with a push, in a clause.
func pushFailure(msg string) string {
	switch {
	case strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first") || strings.Contains(msg, "[rejected]"):
		return "the remote's branch has commits this one lacks (not a fast-forward)"
	case strings.Contains(msg, "does not appear to be a git repository") || strings.Contains(msg, "Could not read from remote") ||
		strings.Contains(msg, "unable to access") || strings.Contains(msg, "Could not resolve host"):
		return "the remote could not be reached (" + lastGitLine(msg) + ")"
	}
	return lastGitLine(msg)
}

// lastGitLine is the most telling line of git's message: its first
// fatal: or error: line, without the prefix.
func lastGitLine(msg string) string {
	msg = strings.TrimPrefix(msg, "git push: ")
	msg = strings.TrimPrefix(msg, "git fetch: ")
	for _, l := range strings.Split(msg, "; ") {
		for _, p := range []string{"fatal: ", "error: "} {
			if strings.HasPrefix(l, p) {
				return strings.TrimSpace(strings.TrimPrefix(l, p))
			}
		}
	}
	return strings.TrimSpace(msg)
}

// Fetch fetches branch from the named remote into the remote-tracking
// ref refs/remotes/REMOTE/branch and returns the commit it names.
func (r *Repo) Fetch(ctx context.Context, remote, branch string, dropEnv []string) (string, error) {
	remotes, err := r.Remotes(ctx)
	if err != nil {
		return "", err
	}
	url, ok := remotes[remote]
	if !ok || !validRemoteName(remote) {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	track := "refs/remotes/" + remote + "/" + branch
	if _, err := r.top(ctx, nil, "check-ref-format", track); err != nil {
		return "", fmt.Errorf("the remote %q and branch %q make no usable ref name", remote, branch)
	}
	_, err = r.runNet(ctx, dropEnv, "", "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head",
		remote, "+refs/heads/"+branch+":"+track)
	if err != nil {
		return "", errors.New(RedactIn(lastGitLine(err.Error()), url))
	}
	out, err := r.top(ctx, nil, "rev-parse", "--verify", "--quiet", track+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("the fetch of %s from %s brought no commit", branch, remote)
	}
	return strings.TrimSpace(out), nil
}

// SetBranch points refs/heads/branch at commit if it still names old
// ("" for a branch that must not exist yet).
func (r *Repo) SetBranch(ctx context.Context, branch, commit, old string) error {
	if old == "" {
		old = strings.Repeat("0", len(commit))
	}
	_, err := r.top(ctx, nil, "update-ref", "-m", "agentteam: fetched "+branch, "refs/heads/"+branch, commit, old)
	return err
}

// IsCommitID reports whether s is a full hexadecimal object id (SHA-1 or SHA-256).
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RedactURL is url without the user and password a URL may carry
// (https://user:token@host/x → https://host/x); an scp-like address
// (git@host:x) has no password and is kept.
func RedactURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	if path != "" || strings.Contains(rest, "/") {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}

// RedactIn replaces url in msg with RedactURL(url).
func RedactIn(msg, url string) string {
	if url == "" {
		return msg
	}
	return strings.ReplaceAll(msg, url, RedactURL(url))
}

// SameRepoURL reports whether two remote URLs name the same repository,
// credentials and a trailing ".git" or "/" aside.
func SameRepoURL(a, b string) bool {
	norm := func(u string) string {
		u = strings.TrimSuffix(strings.TrimSuffix(RedactURL(u), "/"), ".git")
		return strings.TrimSuffix(u, "/")
	}
	return a != "" && norm(a) == norm(b)
}

// runNet is run for push and fetch: netSafety on, the person's ssh
// agent and proxies in git's environment, and the variables hide names
// (the model API key's) left out. url is where a push goes.
func (r *Repo) runNet(ctx context.Context, hide []string, url string, args ...string) (string, error) {
	// git takes the first remote.NAME.uploadpack (or receivepack) it reads,
	// the repository's own: only the command line wins over it.
	switch args[0] {
	case "fetch":
		args = slices.Insert(args, 1, "--upload-pack=git-upload-pack")
	case "push":
		rp := "git-receive-pack"
		if localURL(url) {
			rp = localReceivePack
		}
		args = slices.Insert(args, 1, "--receive-pack="+rp)
	}
	return runGit(ctx, r.Top, r.where(), nil, true, hide, args)
}

// localReceivePack receives a push into a repository on this machine,
// which a model may have made (and pointed the remote's URL at): its hooks
// and a checkout of its own (updateInstead) would run as the person.
const localReceivePack = "git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c receive.denyCurrentBranch=refuse receive-pack"

// localURL reports whether git reaches url on this machine, by path: a
// file:// URL, or no scheme and no host: before the first slash.
func localURL(url string) bool {
	if strings.HasPrefix(url, "file://") {
		return true
	}
	if strings.Contains(url, "://") {
		return false
	}
	colon, slash := strings.Index(url, ":"), strings.Index(url, "/")
	return colon < 0 || slash >= 0 && slash < colon
}

// A teammate on a worker starts from the lead's commit, not from the
// worker's clone, which may be behind: the lead makes sure the team's
// remote has that commit (PushCommit to a ref of agentteam's own when no
// branch it knows of there holds it), the worker fetches it by id
// (FetchCommit). A merged teammate's pushed branch is then deleted from
// the remote (DeleteRemoteRef), unless it moved on since.

// HasCommit reports whether id is a commit this repository has.
func (r *Repo) HasCommit(ctx context.Context, id string) bool {
	if !IsCommitID(id) {
		return false
	}
	_, err := r.top(ctx, nil, "cat-file", "-e", id+"^{commit}")
	return err == nil
}

// RemoteHas reports whether a remote-tracking branch of remote holds
// commit: the remote had it when it was last fetched from.
func (r *Repo) RemoteHas(ctx context.Context, remote, commit string) bool {
	if !validRemoteName(remote) || !IsCommitID(commit) {
		return false
	}
	out, err := r.top(ctx, nil, "for-each-ref", "--count=1", "--format=%(refname)", "--contains", commit, "refs/remotes/"+remote+"/")
	return err == nil && strings.TrimSpace(out) != ""
}

// PushCommit sets ref (a full ref name outside refs/heads and refs/tags,
// agentteam's own) on the named remote to commit, forced: the ref is
// agentteam's, only there to keep the commit on the remote.
func (r *Repo) PushCommit(ctx context.Context, remote, commit, ref string, dropEnv []string) error {
	if !IsCommitID(commit) || !strings.HasPrefix(ref, "refs/agentteam/") {
		return fmt.Errorf("push %.80q to %.80q: not a commit id and a ref of agentteam's", commit, ref)
	}
	url, err := r.PushURL(ctx, remote)
	if err != nil {
		return err
	}
	if _, err := r.top(ctx, nil, "check-ref-format", ref); err != nil {
		return fmt.Errorf("%.80q is no usable ref name", ref)
	}
	_, err = r.runNet(ctx, dropEnv, url, "push", "--quiet", "--no-verify", "--recurse-submodules=no", remote, "+"+commit+":"+ref)
	if err != nil {
		return errors.New(RedactIn(pushFailure(err.Error()), url))
	}
	return nil
}

// FetchCommit fetches the commit id from the named remote (by id: the
// remote must hold it under some ref), writing no ref here.
func (r *Repo) FetchCommit(ctx context.Context, remote, id string, dropEnv []string) error {
	if !IsCommitID(id) {
		return fmt.Errorf("%.80q is no commit id", id)
	}
	remotes, err := r.Remotes(ctx)
	if err != nil {
		return err
	}
	url, ok := remotes[remote]
	if !ok || !validRemoteName(remote) {
		return fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	_, err = r.runNet(ctx, dropEnv, "", "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head", remote, id)
	if err != nil {
		msg := lastGitLine(err.Error())
		if strings.Contains(msg, "not our ref") {
			msg = "the remote has no such commit"
		}
		return errors.New(RedactIn(msg, url))
	}
	if !r.HasCommit(ctx, id) {
		return fmt.Errorf("the fetch from %s brought no commit %.12s", remote, id)
	}
	return nil
}

// DeleteRemoteRef deletes ref on the named remote if it still names
// expect (a full commit id): one that moved on since is left alone. An
// expect of "" deletes whatever it names, for agentteam's own refs only.
func (r *Repo) DeleteRemoteRef(ctx context.Context, remote, ref, expect string, dropEnv []string) error {
	own := expect == "" && strings.HasPrefix(ref, "refs/agentteam/")
	if !own && !IsCommitID(expect) || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("delete %.80q at %.80q: not a ref and a commit id", ref, expect)
	}
	url, err := r.PushURL(ctx, remote)
	if err != nil {
		return err
	}
	if _, err := r.top(ctx, nil, "check-ref-format", ref); err != nil {
		return fmt.Errorf("%.80q is no usable ref name", ref)
	}
	args := []string{"push", "--quiet", "--no-verify", "--recurse-submodules=no"}
	if !own {
		args = append(args, "--force-with-lease="+ref+":"+expect)
	}
	_, err = r.runNet(ctx, dropEnv, url, append(args, remote, ":"+ref)...)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "stale info") {
			return errors.New("it has moved on since (or is gone)")
		}
		return errors.New(RedactIn(pushFailure(msg), url))
	}
	return nil
}

// FastForward moves the worktree's branch forward to commit (git merge
// --ff-only); it fails, changing nothing, when that is no fast-forward.
func (r *Repo) FastForward(ctx context.Context, w *Worktree, commit string) error {
	if !IsCommitID(commit) {
		return fmt.Errorf("%.80q is no commit id", commit)
	}
	_, err := r.wt(ctx, w, nil, "merge", "--ff-only", "--quiet", commit)
	return err
}
