package gitwt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The model API key and other secrets in agentteam's environment, which no
// program git runs may see.
var secrets = map[string]string{
	"OPENAI_API_KEY": "sk-must-not-leak", "GITHUB_TOKEN": "ghp-must-not-leak",
	"NATS_PASSWORD": "nats-must-not-leak", "MY_LLM_SECRET": "must-not-leak",
}

// evilProgram is a program that, run as `PROG NAME …`, leaves a marker
// file NAME in marks holding its environment, and fails. For settings git
// runs without a shell, PROG-NAME is one that does PROG NAME.
func evilProgram(t *testing.T) (prog, marks string) {
	t.Helper()
	base := t.TempDir()
	marks = filepath.Join(base, "marks")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	prog = filepath.Join(base, "evil")
	write(t, prog, "#!/bin/sh\nenv > '"+marks+"'/\"$1\"\nexit 1\n")
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpg", "ssh-sign", "fsmonitor", "git-proxy", "askpass"} {
		path := prog + "-" + name
		write(t, path, "#!/bin/sh\nexec '"+prog+"' "+name+"\n")
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return prog, marks
}

// noMarks fails the test for every program that ran.
func noMarks(t *testing.T, marks string) {
	t.Helper()
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("agentteam's git ran the repository's program %q", e.Name())
	}
}

// hostileEnv puts the secrets in the environment and keeps the machine's
// own git config out of the test.
func hostileEnv(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range secrets {
		t.Setenv(k, v)
	}
}

// driversSetup is a repository where eve's branch and bob's branch and
// main each changed notes.txt apart, so merging either merges that file;
// its attributes send every file through the driver ev.
func driversSetup(t *testing.T) (dir string, r *Repo, eve, bob *Worktree) {
	t.Helper()
	dir, r = newRepo(t)
	ctx := context.Background()
	var err error
	if eve, err = r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve"); err != nil {
		t.Fatal(err)
	}
	if bob, err = r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "bob"), "agentteam/bob"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(eve.Path, "notes.txt"), "one\ntwo\nthree\nfour\n")
	write(t, filepath.Join(bob.Path, "notes.txt"), "one\n2\nthree\n")
	for _, w := range []*Worktree{eve, bob} {
		if _, err := w.CommitAll(ctx, "work"); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "notes.txt"), "zero\none\ntwo\nthree\n")
	git(t, dir, "commit", "--quiet", "-am", "lead")
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=ev diff=ev merge=ev\n")
	return dir, r, eve, bob
}

// exercise runs what agentteam does with a teammate's worktree: status,
// commit, diffstat, diff, a new worktree, both merges and a removal.
func exercise(t *testing.T, dir string, r *Repo, eve, bob *Worktree) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	write(t, filepath.Join(eve.Path, "new.txt"), "new\n")
	write(t, filepath.Join(eve.Path, "notes.txt"), "one\ntwo\nthree\nfour\nfive\n")
	_, err := eve.Changes(ctx)
	check("Changes", err)
	_, err = eve.CommitAll(ctx, "eve's work")
	check("CommitAll", err)
	write(t, filepath.Join(dir, "notes.txt"), "zero\none\ntwo\nthree\n") // same content, new stat
	_, err = r.Dirty(ctx)
	check("Dirty", err)
	_, _, err = r.BranchStat(ctx, "agentteam/eve")
	check("BranchStat", err)
	for _, stat := range []bool{false, true} {
		_, err = r.BranchDiff(ctx, "agentteam/eve", stat)
		check("BranchDiff", err)
	}
	_, err = r.ShortStat(ctx, "HEAD~1", "HEAD")
	check("ShortStat", err)
	zed, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "zed"), "agentteam/zed")
	check("Add", err)
	conflicts, err := eve.MergeInto(ctx, "main", "merge main")
	check("MergeInto", err)
	if len(conflicts) > 0 {
		t.Errorf("MergeInto conflicted: %v", conflicts)
	}
	res, err := r.Merge(ctx, "agentteam/bob", "merge bob")
	check("Merge", err)
	if len(res.Conflicts) > 0 {
		t.Errorf("Merge conflicted: %v", res.Conflicts)
	}
	if zed != nil {
		check("Remove", r.Remove(ctx, zed, false))
	}
	check("Remove", r.Remove(ctx, bob, true))
}

// A model's bash can write .git/config (and what it includes) and the
// attributes: none of the programs they name runs when agentteam's own git
// status, commits, diffs, checks out or merges.
func TestTheRepositorysProgramsNeverRun(t *testing.T) {
	testkit.SkipShort(t)
	cases := []struct {
		name   string
		config string // appended to .git/config; PROG is the evil program, INC a file it may include
		inc    string // the included file's content
		wtConf string // eve's config.worktree
	}{
		{name: "filter clean", config: "[filter \"ev\"]\n\tclean = PROG filter-clean\n"},
		{name: "filter smudge", config: "[filter \"ev\"]\n\tsmudge = PROG filter-smudge\n"},
		{name: "filter process", config: "[filter \"ev\"]\n\tprocess = PROG filter-process\n"},
		{name: "required filter", config: "[filter \"ev\"]\n\tclean = PROG filter-clean\n\tsmudge = PROG filter-smudge\n\trequired = true\n"},
		{name: "diff textconv", config: "[diff \"ev\"]\n\ttextconv = PROG diff-textconv\n"},
		{name: "diff command", config: "[diff \"ev\"]\n\tcommand = PROG diff-command\n"},
		{name: "diff.external", config: "[diff]\n\texternal = PROG diff-external\n"},
		{name: "merge driver", config: "[merge \"ev\"]\n\tdriver = PROG merge-driver\n\trecursive = ev\n"},
		{name: "core.fsmonitor", config: "[core]\n\tfsmonitor = PROG-fsmonitor\n"},
		{name: "pager", config: "[core]\n\tpager = PROG core-pager\n[pager]\n\tdiff = PROG pager-diff\n\tstatus = PROG pager-status\n"},
		{name: "editor", config: "[core]\n\teditor = PROG core-editor\n[sequence]\n\teditor = PROG sequence-editor\n"},
		{name: "gpg signing", config: "[commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n[gpg]\n\tprogram = PROG-gpg\n[merge]\n\tverifySignatures = true\n"},
		{name: "ssh signing", config: "[commit]\n\tgpgSign = true\n[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tprogram = PROG-ssh-sign\n\tdefaultKeyCommand = PROG ssh-key\n"},
		{name: "include.path", config: "[include]\n\tpath = INC\n", inc: "[filter \"ev\"]\n\tclean = PROG inc-clean\n\tsmudge = PROG inc-smudge\n[diff \"ev\"]\n\ttextconv = PROG inc-textconv\n"},
		{name: "includeIf onbranch", config: "[includeIf \"onbranch:agentteam/**\"]\n\tpath = INC\n", inc: "[filter \"ev\"]\n\tsmudge = PROG onbranch-smudge\n\tclean = PROG onbranch-clean\n[merge \"ev\"]\n\tdriver = PROG onbranch-merge\n"},
		{name: "config.worktree", config: "[extensions]\n\tworktreeConfig = true\n", wtConf: "[filter \"ev\"]\n\tclean = PROG worktree-clean\n[merge \"ev\"]\n\tdriver = PROG worktree-merge\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostileEnv(t)
			dir, r, eve, bob := driversSetup(t)
			prog, marks := evilProgram(t)
			inc := filepath.Join(t.TempDir(), "included")
			write(t, inc, strings.ReplaceAll(c.inc, "PROG", prog))
			cfg := strings.NewReplacer("PROG", prog, "INC", inc).Replace(c.config)
			if c.wtConf != "" {
				git(t, dir, "config", "core.repositoryFormatVersion", "1")
				write(t, filepath.Join(eve.GitDir, "config.worktree"), strings.ReplaceAll(c.wtConf, "PROG", prog))
			}
			appendFile(t, filepath.Join(dir, ".git", "config"), cfg)
			exercise(t, dir, r, eve, bob)
			noMarks(t, marks)
		})
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
