package gitwt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// BranchExists reports whether refs/heads/branch exists.
func (r *Repo) BranchExists(ctx context.Context, branch string) bool {
	_, err := r.top(ctx, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
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

// SetBranch points refs/heads/branch at commit if it still names old
// ("" for a branch that must not exist yet).
func (r *Repo) SetBranch(ctx context.Context, branch, commit, old string) error {
	if old == "" {
		old = strings.Repeat("0", len(commit))
	}
	_, err := r.top(ctx, nil, "update-ref", "-m", "agentteam: fetched "+branch, "refs/heads/"+branch, commit, old)
	return err
}

// HasCommit reports whether id is a commit this repository has.
func (r *Repo) HasCommit(ctx context.Context, id string) bool {
	if !IsCommitID(id) {
		return false
	}
	_, err := r.top(ctx, nil, "cat-file", "-e", id+"^{commit}")
	return err == nil
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
