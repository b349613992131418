package gitwt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileConfig is a config section sending every file through programs
// of prog's, for a repository whose attributes name the driver ev.
func hostileConfig(prog, who string) string {
	return "[core]\n\tfsmonitor = " + prog + "-fsmonitor\n[diff]\n\texternal = " + prog + " " + who + "-external\n" +
		"[filter \"ev\"]\n\tclean = " + prog + " " + who + "-clean\n\tsmudge = " + prog + " " + who + "-smudge\n" +
		"[diff \"ev\"]\n\ttextconv = " + prog + " " + who + "-textconv\n\tcommand = " + prog + " " + who + "-command\n" +
		"[merge \"ev\"]\n\tdriver = " + prog + " " + who + "-merge\n"
}

// A worktree teammate cannot reach the main .git, but can make a
// repository inside its worktree: agentteam's status, commit, diff, merge
// and removal never go into it, so its config's programs never run.
func TestANestedRepositoryInAWorktreeRunsNothing(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	ctx := context.Background()
	prog, marks := evilProgram(t)
	eve, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(eve.Path, "sub")
	write(t, filepath.Join(sub, "f.txt"), "one\n")
	git(t, sub, "init", "--quiet")
	git(t, sub, "add", "f.txt")
	git(t, sub, "-c", "user.name=eve", "-c", "user.email=eve@example.com", "commit", "--quiet", "-m", "sub")
	appendFile(t, filepath.Join(sub, ".git", "config"), hostileConfig(prog, "nested"))
	write(t, filepath.Join(sub, ".git", "info", "attributes"), "* filter=ev diff=ev merge=ev\n")
	write(t, filepath.Join(sub, ".gitattributes"), "* filter=ev diff=ev merge=ev\n")

	steps := []struct {
		what string
		do   func() error
	}{
		{"Changes", func() error { _, err := eve.Changes(ctx); return err }},
		{"CommitAll", func() error { _, err := eve.CommitAll(ctx, "eve"); return err }},
		{"edit", func() error { return os.WriteFile(filepath.Join(sub, "f.txt"), []byte("two\n"), 0o644) }},
		{"Changes", func() error { _, err := eve.Changes(ctx); return err }},
		{"CommitAll", func() error { _, err := eve.CommitAll(ctx, "eve again"); return err }},
		{"BranchStat", func() error { _, _, err := r.BranchStat(ctx, "agentteam/eve"); return err }},
		{"BranchDiff", func() error { _, err := r.BranchDiff(ctx, "agentteam/eve", false); return err }},
		{"Merge", func() error { _, err := r.Merge(ctx, "agentteam/eve", "merge eve"); return err }},
		{"Dirty", func() error { _, err := r.Dirty(ctx); return err }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Errorf("%s: %v", s.what, err)
		}
	}
	_ = r.Remove(ctx, eve, false) // git refuses to remove a worktree with a repository in it
	noMarks(t, marks)
}

// A teammate that points its worktree's .git file at a git directory it
// made (with programs in its config) gets them run by none of agentteam's
// git, and its work still lands on its own branch.
func TestARewrittenDotGitFileRunsNothing(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	ctx := context.Background()
	prog, marks := evilProgram(t)
	eve, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(eve.Path, ".made")
	git(t, eve.Path, "init", "--quiet", "--bare", made)
	git(t, made, "config", "core.bare", "false")
	appendFile(t, filepath.Join(made, "config"), hostileConfig(prog, "made"))
	write(t, filepath.Join(made, "info", "attributes"), "* filter=ev diff=ev merge=ev\n")
	write(t, filepath.Join(eve.Path, ".git"), "gitdir: "+made+"\n")
	write(t, filepath.Join(eve.Path, "eve.txt"), "eve\n")

	if _, err := eve.Changes(ctx); err != nil {
		t.Error(err)
	}
	if _, err := eve.CommitAll(ctx, "eve"); err != nil {
		t.Error(err)
	}
	if _, _, err := r.BranchStat(ctx, "agentteam/eve"); err != nil {
		t.Error(err)
	}
	if _, err := r.BranchDiff(ctx, "agentteam/eve", false); err != nil {
		t.Error(err)
	}
	if _, err := r.Merge(ctx, "agentteam/eve", "merge eve"); err != nil {
		t.Error(err)
	}
	if got := read(t, filepath.Join(dir, "eve.txt")); got != "eve\n" {
		t.Errorf("the merge brought eve.txt = %q", got)
	}
	_ = r.Remove(ctx, eve, true)
	noMarks(t, marks)
}

// core.worktree in the repository's config would send git's writes (a
// merge's files) into another directory: Open refuses such a repository,
// and one set after Open is never followed.
func TestCoreWorktreeCannotMoveTheWorkTree(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	ctx := context.Background()
	victim, _ := newRepo(t)
	eve, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(eve.Path, "eve.txt"), "eve\n")
	if _, err := eve.CommitAll(ctx, "eve"); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "config", "core.worktree", victim)
	if o, err := Open(ctx, dir); err == nil {
		t.Errorf("Open took a repository whose core.worktree is elsewhere: Top %s", o.Top)
	} else if !strings.Contains(err.Error(), "core.worktree") {
		t.Errorf("Open: %v", err)
	}
	if _, err := r.Merge(ctx, "agentteam/eve", "merge eve"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(victim, "eve.txt")); err == nil {
		t.Error("the merge wrote eve.txt into core.worktree's directory")
	}
	if got := read(t, filepath.Join(dir, "eve.txt")); got != "eve\n" {
		t.Errorf("eve.txt = %q", got)
	}
}
