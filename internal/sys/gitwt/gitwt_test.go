package gitwt

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// git runs the real git CLI in dir for a test's setup and checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo is a repository with one commit of notes.txt, and its Repo.
func newRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "--quiet", "-b", "main")
	git(t, dir, "config", "user.name", "Tester")
	git(t, dir, "config", "user.email", "tester@example.com")
	write(t, filepath.Join(dir, "notes.txt"), "one\ntwo\nthree\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "--quiet", "-m", "start")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestOpenRefusesADirectoryOutsideARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if _, err := Open(context.Background(), dir); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open(non-repo) = %v, want ErrNotRepo", err)
	}
}

func TestOpenWithoutGitSaysSo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Open(context.Background(), t.TempDir()); !errors.Is(err, ErrNoGit) {
		t.Fatalf("Open without git = %v, want ErrNoGit", err)
	}
}

func TestAddNeedsACommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	git(t, dir, "init", "--quiet")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(context.Background(), filepath.Join(dir, "wt"), "agentteam/a"); !errors.Is(err, ErrNoCommit) {
		t.Fatalf("Add in a repository without commits = %v, want ErrNoCommit", err)
	}
}

// A subdirectory finds the repository's top, and Exclude writes its line once.
func TestOpenFromASubdirectoryAndExcludeOnce(t *testing.T) {
	dir, _ := newRepo(t)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if r.Top != dir || r.CommonDir != filepath.Join(dir, ".git") {
		t.Fatalf("Open(sub) = %+v, want top %s", r, dir)
	}
	for range 2 {
		if err := r.Exclude(".agentteam/"); err != nil {
			t.Fatal(err)
		}
	}
	ex := read(t, filepath.Join(dir, ".git", "info", "exclude"))
	if strings.Count(ex, "\n.agentteam/\n") != 1 && !strings.HasPrefix(ex, ".agentteam/\n") {
		t.Fatalf("info/exclude holds the pattern not exactly once:\n%s", ex)
	}
	if strings.Count(ex, ".agentteam/") != 1 {
		t.Fatalf("info/exclude:\n%s", ex)
	}
	write(t, filepath.Join(dir, ".agentteam", "inbox", "lead.jsonl"), "{}\n")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status shows agentteam's state:\n%s", st)
	}
}

// Two worktrees change the same line: the first merges, the second
// conflicts and is aborted with the tree clean; resolved on its branch it
// merges, and both changes are in the main tree.
func TestWorktreesCommitMergeConflictAndRemove(t *testing.T) {
	dir, r := newRepo(t)
	ctx := context.Background()
	if err := r.Exclude(".agentteam/"); err != nil {
		t.Fatal(err)
	}
	add := func(name string) *Worktree {
		w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", name), "agentteam/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if w.Branch != "agentteam/"+name || !strings.HasPrefix(w.GitDir, filepath.Join(dir, ".git", "worktrees")) {
			t.Fatalf("worktree %+v", w)
		}
		return w
	}
	alice, bob := add("alice"), add("bob")

	write(t, filepath.Join(alice.Path, "notes.txt"), "one\nTWO by alice\nthree\n")
	write(t, filepath.Join(alice.Path, "alice.txt"), "new\n")
	if ch, err := alice.Changes(ctx); err != nil || !slices.Equal(ch, []string{"alice.txt", "notes.txt"}) {
		t.Fatalf("Changes = %v, %v", ch, err)
	}
	if ok, err := alice.CommitAll(ctx, "agentteam: alice's work"); err != nil || !ok {
		t.Fatalf("CommitAll(alice) = %v, %v", ok, err)
	}
	if ok, err := alice.CommitAll(ctx, "again"); err != nil || ok {
		t.Fatalf("CommitAll with nothing to commit = %v, %v", ok, err)
	}
	write(t, filepath.Join(bob.Path, "notes.txt"), "one\nTWO by bob\nthree\n")
	if _, err := bob.CommitAll(ctx, "agentteam: bob's work"); err != nil {
		t.Fatal(err)
	}
	sum, files, err := r.BranchStat(ctx, "agentteam/alice")
	if err != nil || !strings.Contains(sum, "2 files changed") || !strings.Contains(files, "alice.txt") {
		t.Fatalf("BranchStat = %q, %q, %v", sum, files, err)
	}
	if r.IsMerged(ctx, "agentteam/alice") {
		t.Fatal("alice's branch counts as merged before the merge")
	}

	res, err := r.Merge(ctx, "agentteam/alice", "merge alice")
	if err != nil || len(res.Conflicts) > 0 || !strings.Contains(res.Stat, "2 files changed") {
		t.Fatalf("Merge(alice) = %+v, %v", res, err)
	}
	if !r.IsMerged(ctx, "agentteam/alice") {
		t.Fatal("alice's branch is not merged after the merge")
	}
	parents := strings.Fields(git(t, dir, "log", "-1", "--format=%P"))
	if len(parents) != 2 {
		t.Fatalf("the merge is not a merge commit (--no-ff): parents %v", parents)
	}

	res, err = r.Merge(ctx, "agentteam/bob", "merge bob")
	if err != nil || !slices.Equal(res.Conflicts, []string{"notes.txt"}) {
		t.Fatalf("Merge(bob) = %+v, %v; want a conflict in notes.txt", res, err)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the conflict was not aborted cleanly:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "MERGE_HEAD")); err == nil {
		t.Fatal("MERGE_HEAD left behind")
	}

	// main is merged into bob's worktree, the conflict left marked; the
	// commit refuses the markers; resolved, it commits and concludes the merge.
	marked, err := bob.MergeInto(ctx, "main", "merge main into bob")
	if err != nil || !slices.Equal(marked, []string{"notes.txt"}) {
		t.Fatalf("MergeInto = %v, %v", marked, err)
	}
	if got := read(t, filepath.Join(bob.Path, "notes.txt")); !strings.Contains(got, "<<<<<<< ") || !strings.Contains(got, "TWO by alice") {
		t.Fatalf("bob's notes.txt is not marked: %q", got)
	}
	if _, err := bob.CommitAll(ctx, "bob"); err == nil || !strings.Contains(err.Error(), "unresolved merge conflicts in notes.txt") {
		t.Fatalf("CommitAll with conflicts = %v", err)
	}
	write(t, filepath.Join(bob.Path, "notes.txt"), "one\nTWO by alice\nTWO by bob\nthree\n")
	if ok, err := bob.CommitAll(ctx, "agentteam: bob resolved"); err != nil || !ok {
		t.Fatalf("CommitAll(resolved) = %v, %v", ok, err)
	}
	if p := strings.Fields(git(t, dir, "log", "-1", "--format=%P", "agentteam/bob")); len(p) != 2 {
		t.Fatalf("bob's resolution is not a merge commit: parents %v", p)
	}
	if res, err := r.Merge(ctx, "agentteam/bob", "merge bob"); err != nil || len(res.Conflicts) > 0 {
		t.Fatalf("Merge(bob) again = %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(dir, "notes.txt")); got != "one\nTWO by alice\nTWO by bob\nthree\n" {
		t.Fatalf("notes.txt = %q", got)
	}
	if res, err := r.Merge(ctx, "agentteam/bob", "merge bob"); err != nil || !res.UpToDate {
		t.Fatalf("a merged branch merged again = %+v, %v", res, err)
	}

	for _, w := range []*Worktree{alice, bob} {
		if err := r.Remove(ctx, w, false); err != nil {
			t.Fatal(err)
		}
		if err := r.DeleteBranch(ctx, w.Branch); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
			t.Fatalf("%s still exists", w.Path)
		}
	}
	if r.BranchExists(ctx, "agentteam/bob") {
		t.Fatal("bob's branch is left")
	}
}

// A teammate that rewrites the .git file of its worktree to point at the
// main repository does not get its work committed onto the lead's branch.
func TestCommitIgnoresARewrittenDotGitFile(t *testing.T) {
	dir, r := newRepo(t)
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, ".git"), "gitdir: "+filepath.Join(dir, ".git")+"\n")
	write(t, filepath.Join(w.Path, "evil.txt"), "x\n")
	head := strings.TrimSpace(git(t, dir, "rev-parse", "main"))
	if _, err := w.CommitAll(ctx, "agentteam: eve's work"); err != nil {
		t.Fatal(err)
	}
	if now := strings.TrimSpace(git(t, dir, "rev-parse", "main")); now != head {
		t.Fatal("the commit landed on the lead's branch")
	}
	if files := git(t, dir, "show", "--name-only", "--format=", "agentteam/eve"); !strings.Contains(files, "evil.txt") {
		t.Fatalf("eve's branch lacks its file: %q", files)
	}
}

// Add on an existing branch (a worktree removed while its branch was kept)
// brings the branch's work back.
func TestAddReattachesAnExistingBranch(t *testing.T) {
	dir, r := newRepo(t)
	ctx := context.Background()
	path := filepath.Join(dir, ".agentteam", "worktrees", "carol")
	w, err := r.Add(ctx, path, "agentteam/carol")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "carol.txt"), "kept\n")
	if _, err := w.CommitAll(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "agentteam/carol"); err == nil {
		t.Fatal("an unmerged branch was deleted by branch -d")
	}
	w, err = r.Add(ctx, path, "agentteam/carol")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(w.Path, "carol.txt")); got != "kept\n" {
		t.Fatalf("carol.txt = %q", got)
	}
	if _, err := r.Find(ctx, filepath.Join(dir, "elsewhere")); err == nil {
		t.Fatal("Find found a worktree where there is none")
	}
}

// A hook a teammate wrote (its bash can reach .git/hooks) does not run when
// agentteam commits or merges its work.
func TestHooksDoNotRunOnAgentteamsCommitsAndMerges(t *testing.T) {
	dir, r := newRepo(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")
	for _, h := range []string{"pre-commit", "post-commit", "commit-msg", "pre-merge-commit", "post-merge"} {
		path := filepath.Join(dir, ".git", "hooks", h)
		write(t, path, "#!/bin/sh\necho "+h+" >> "+pwned+"\n")
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "eve.txt"), "x\n")
	if _, err := w.CommitAll(ctx, "eve"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Merge(ctx, "agentteam/eve", "merge eve"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(pwned); err == nil {
		t.Fatalf("hooks ran: %s", data)
	}
}

// A branch of many files keeps its summary whole and its per-file lines
// bounded; a detached HEAD is named by its commit.
func TestBranchStatIsBoundedAndADetachedHeadHasAName(t *testing.T) {
	dir, r := newRepo(t)
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "many"), "agentteam/many")
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxStatFiles + 5 {
		write(t, filepath.Join(w.Path, "f", strings.Repeat("x", i+1)+".txt"), "x\n")
	}
	if _, err := w.CommitAll(ctx, "many"); err != nil {
		t.Fatal(err)
	}
	sum, files, err := r.BranchStat(ctx, "agentteam/many")
	if err != nil || !strings.HasPrefix(sum, "45 files changed") {
		t.Fatalf("summary %q, %v", sum, err)
	}
	if n := len(strings.Split(files, "\n")); n != maxStatFiles+1 || !strings.Contains(files, "… and 5 more files") {
		t.Fatalf("%d per-file lines:\n%s", n, files)
	}
	if b := r.CurrentBranch(ctx); b != "main" {
		t.Fatalf("CurrentBranch = %q", b)
	}
	git(t, dir, "checkout", "--quiet", "--detach")
	short := strings.TrimSpace(git(t, dir, "rev-parse", "--short", "HEAD"))
	if b := r.CurrentBranch(ctx); b != short {
		t.Fatalf("CurrentBranch detached = %q, want %q", b, short)
	}
}
