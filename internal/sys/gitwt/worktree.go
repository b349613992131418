package gitwt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Worktree is one linked worktree of a Repo, as Find and Add return it;
// its methods run git in it: status, commit, merge and fast-forward.
type Worktree struct {
	// Path is its work tree; GitDir its own git directory
	// (CommonDir/worktrees/NAME); Branch its branch's short name.
	Path, GitDir, Branch string
	repo                 *Repo // the repository it is a worktree of
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
	if _, err := w.git(ctx, nil, "reset", "--hard", "--quiet"); err != nil {
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
		wt := Worktree{repo: r}
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
		changes, err := wt.Changes(ctx)
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

// git runs git in the worktree by its recorded directories.
func (w *Worktree) git(ctx context.Context, env []string, args ...string) (string, error) {
	where := []string{"--git-dir=" + w.GitDir, "--work-tree=" + w.Path}
	return runGit(ctx, w.Path, where, env, false, nil, args)
}

// Changes lists the worktree's uncommitted changes, untracked files included.
func (w *Worktree) Changes(ctx context.Context) ([]string, error) {
	out, err := w.git(ctx, nil, "status", "--porcelain", "--ignore-submodules=all", "-z")
	if err != nil {
		return nil, err
	}
	return porcelainPaths(out), nil
}

// CommitAll commits every change in the worktree (git add -A, git commit)
// on its branch with message. It reports false when there was nothing to
// commit. A worktree in a merge whose files still hold conflict markers is
// not committed: that would record the markers as the resolution.
func (w *Worktree) CommitAll(ctx context.Context, message string) (bool, error) {
	changes, err := w.Changes(ctx)
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
	if _, err := w.git(ctx, nil, "add", "-A"); err != nil {
		return false, err
	}
	if _, err := w.git(ctx, w.repo.identityEnv(ctx), "commit", "--quiet", "--no-verify", "-m", message); err != nil {
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

// MergeInto merges rev into the worktree's branch, so the teammate can
// resolve a conflict by editing files alone (no git of its own, no write
// to the repository's git directory). A conflict is left in place, files
// marked, for the teammate to resolve: its next commit (CommitAll)
// concludes the merge. Any other failure is aborted and an error.
func (w *Worktree) MergeInto(ctx context.Context, rev, message string) (conflicts []string, err error) {
	_, merr := w.git(ctx, w.repo.identityEnv(ctx), "merge", "--no-ff", "--no-edit", "-m", message, rev)
	if merr == nil {
		return nil, nil
	}
	out, err := w.git(ctx, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--name-only", "--diff-filter=U", "-z")
	if conflicts = splitZ(out); err == nil && len(conflicts) > 0 {
		return conflicts, nil
	}
	if _, serr := os.Stat(filepath.Join(w.GitDir, "MERGE_HEAD")); serr == nil {
		_, _ = w.git(ctx, nil, "merge", "--abort")
	}
	return nil, merr
}

// FastForward moves the worktree's branch forward to commit (git merge
// --ff-only); it fails, changing nothing, when that is no fast-forward.
func (w *Worktree) FastForward(ctx context.Context, commit string) error {
	if !IsCommitID(commit) {
		return fmt.Errorf("%.80q is no commit id", commit)
	}
	_, err := w.git(ctx, nil, "merge", "--ff-only", "--quiet", commit)
	return err
}
