//go:build unix

package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// In plan mode without the sandbox, only the allowlist keeps bash
// read-only, and it lets git status, diff, log, show and blame run: with
// a hostile .git/config and attributes in the workspace they run none of
// the programs the repository names.
func TestPlanModeGitRunsNoProgramOfTheRepositorys(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env, _, _, _ := testEnv(t)
	env.Gate = closedGate{}
	root := env.Workspace.Root
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet")
	put(filepath.Join(root, "notes.txt"), "one\n", 0o644)
	git("add", "notes.txt")
	git("commit", "--quiet", "-m", "one")
	put(filepath.Join(root, "notes.txt"), "one\ntwo\n", 0o644)
	git("commit", "--quiet", "-am", "two")

	marks := filepath.Join(t.TempDir(), "marks")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "evil")
	put(prog, "#!/bin/sh\ntouch '"+marks+"'/\"$1\"\nexit 1\n", 0o755)
	put(prog+"-fsmonitor", "#!/bin/sh\nexec '"+prog+"' fsmonitor\n", 0o755)
	f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[core]\n\tfsmonitor = " + prog + "-fsmonitor\n\tpager = " + prog + " pager\n" +
		"[filter \"ev\"]\n\tclean = " + prog + " clean\n\tsmudge = " + prog + " smudge\n" +
		"[diff \"ev\"]\n\ttextconv = " + prog + " textconv\n\tcommand = " + prog + " diff-command\n" +
		"[diff]\n\texternal = " + prog + " external\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(root, ".git", "info", "attributes"), "* filter=ev diff=ev\n", 0o644)
	put(filepath.Join(root, "notes.txt"), "one\ntwo\nthree\n", 0o644)

	set := ForTeammate(env)
	ctx := context.Background()
	for _, cmd := range []string{"git status", "git diff", "git diff HEAD~1", "git log -p", "git show", "git blame notes.txt"} {
		if !ReadOnlyCommand(cmd) {
			t.Fatalf("%q is not read-only for the allowlist", cmd)
		}
		if r := set.Call(ctx, BashName, `{"command":"`+cmd+`"}`); r.IsError {
			t.Errorf("%s: %s", cmd, r.Content)
		}
	}
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("a plan-mode git command ran the repository's program %q", e.Name())
	}
}
