//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir, outside the sandbox, as the person would.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo is a repository with one commit in a fresh directory.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	root := t.TempDir()
	gitIn(t, root, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "add", "a.txt")
	gitIn(t, root, "commit", "-qm", "a")
	return root
}

// gitAttacks are commands that would make the person's next git run what
// a model wrote: each must fail in the sandbox.
var gitAttacks = []string{
	"printf '#!/bin/sh\\necho HOOK-RAN\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
	"mkdir -p .git/hooks && cp /bin/true .git/hooks/post-checkout",
	"rm -rf .git/hooks",
	"mv .git/hooks .git/hooks-old",
	"echo '[core] hooksPath = /tmp/evil' >> .git/config",
	"git config core.hooksPath /tmp/evil",
	"git config core.fsmonitor 'echo FSMONITOR-RAN'",
	"cp .git/config .git/config.lock && echo '[core] hooksPath = /tmp/evil' >> .git/config.lock && mv .git/config.lock .git/config",
	"echo '* filter=evil' > .git/info/attributes",
	"mv .git .git-old",
	"mv .git/config .git/config-old",
}

// A command's ordinary git work goes on in the sandbox, but it cannot
// change what the person's git later runs: hooks, config, info/attributes,
// nor swap .git for one of its own.
func TestGitDirStaysProtected(t *testing.T) {
	needSandbox(t)
	root := newRepo(t)
	config, _ := os.ReadFile(filepath.Join(root, ".git", "config"))
	p := Policy{Dir: root, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}}
	work := "git -c user.name=m -c user.email=m@example.com " // the model's identity
	r := run(t, p, "set -e; echo b > b.txt; git add b.txt; "+work+"commit -qm b; git checkout -qb feature; echo c > c.txt; git add c.txt; "+
		work+"stash -q; git stash list | grep -q stash; git stash pop -q; "+work+"commit -qm c; git log --oneline | wc -l")
	if r.code != 0 || strings.TrimSpace(r.out) != "3" {
		t.Fatalf("ordinary git work failed in the sandbox: exit %d\n%s", r.code, r.out)
	}
	if got := gitIn(t, root, "log", "--format=%s", "feature"); got != "c\nb\na\n" {
		t.Fatalf("the commits made in the sandbox: %q", got)
	}
	for _, attack := range gitAttacks {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded in the git dir:\n%s", attack, r.out)
		}
	}
	checkGitIntact(t, filepath.Join(root, ".git"), config)
	if out := gitIn(t, root, "commit", "-q", "--allow-empty", "-m", "person"); strings.Contains(out, "RAN") {
		t.Fatalf("the person's commit ran what a command wrote:\n%s", out)
	}
	// Deleting what git keeps there is not guarded, but the guarded entries
	// stay, and the directory with them.
	run(t, p, "rm -rf .git")
	checkGitIntact(t, filepath.Join(root, ".git"), config)
}

// checkGitIntact fails unless gd is still a directory with the config it
// had and no hook or attributes a command wrote.
func checkGitIntact(t *testing.T, gd string, config []byte) {
	t.Helper()
	if fi, err := os.Lstat(gd); err != nil || !fi.IsDir() {
		t.Fatalf("%s is no longer the repository's directory: %v", gd, err)
	}
	if b, err := os.ReadFile(filepath.Join(gd, "config")); err != nil || string(b) != string(config) {
		t.Fatalf("the git config changed: %q (%v)", b, err)
	}
	for _, name := range []string{"hooks/pre-commit", "hooks/post-checkout", "info/attributes"} {
		if _, err := os.Lstat(filepath.Join(gd, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if _, err := os.Stat(filepath.Join(gd, "hooks")); err != nil {
		t.Errorf("the hooks directory is gone: %v", err)
	}
}

// In a linked worktree, the .git file and the shared git dir stay as they
// were; from a subdirectory of the work tree, the repository's .git does.
func TestWorktreeAndSubdirGitStayProtected(t *testing.T) {
	needSandbox(t)
	root := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, root, "worktree", "add", "-q", "-b", "alice", wt)
	dotgit, _ := os.ReadFile(filepath.Join(wt, ".git"))
	config, _ := os.ReadFile(filepath.Join(root, ".git", "config"))
	wtGitDir := filepath.Join(root, ".git", "worktrees", "wt")
	// The worktree and the whole repository writable: the mounts, not
	// Landlock, must stop each attack.
	p := Policy{Dir: wt, Writable: []string{root}, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + wt, "GIT_CONFIG_NOSYSTEM=1"}}
	for _, attack := range []string{
		"echo 'gitdir: /tmp/evil' > .git",
		"rm -f .git",
		"mv .git moved",
		"echo /tmp/evil > " + wtGitDir + "/commondir",
		"mv " + wtGitDir + " " + wtGitDir + "-old",
		"mv " + filepath.Join(root, ".git", "worktrees") + " " + filepath.Join(root, ".git", "wts"),
		"echo x > " + filepath.Join(root, ".git", "hooks", "pre-commit"),
		"git config core.hooksPath /tmp/evil",
	} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded:\n%s", attack, r.out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(wt, ".git")); string(b) != string(dotgit) {
		t.Fatalf("the worktree's .git file changed: %q", b)
	}
	checkGitIntact(t, filepath.Join(root, ".git"), config)
	if r := run(t, p, "echo w > w.txt && git add w.txt && git -c user.name=m -c user.email=m@example.com commit -qm w && git log --format=%s -1"); r.code != 0 || strings.TrimSpace(r.out) != "w" {
		t.Fatalf("committing in the worktree failed: exit %d\n%s", r.code, r.out)
	}

	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p = Policy{Dir: sub, Writable: []string{root}, Env: p.Env}
	for _, attack := range []string{"echo x > ../.git/hooks/pre-commit", "mv ../.git ../.git-old", "git config core.hooksPath /tmp/evil"} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("from a subdirectory, %q succeeded:\n%s", attack, r.out)
		}
	}
	checkGitIntact(t, filepath.Join(root, ".git"), config)
}

// A repository without hooks or info gets them, empty and read-only, so a
// command cannot make them; with extensions.worktreeConfig named, an empty
// config.worktree too.
func TestMissingGitEntriesCannotBeMade(t *testing.T) {
	needSandbox(t)
	root := newRepo(t)
	gd := filepath.Join(root, ".git")
	for _, name := range []string{"hooks", "info"} {
		if err := os.RemoveAll(filepath.Join(gd, name)); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "config", "extensions.worktreeConfig", "true")
	p := Policy{Dir: root, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}}
	for _, attack := range []string{
		"echo x > .git/hooks/pre-commit", "echo '* filter=evil' > .git/info/attributes",
		"echo '[core] hooksPath = /tmp/evil' > .git/config.worktree", "git config --worktree core.hooksPath /tmp/evil",
	} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded:\n%s", attack, r.out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(gd, "config.worktree")); err != nil || len(b) != 0 {
		t.Fatalf("config.worktree is not the empty one: %q (%v)", b, err)
	}
	if out, err := exec.Command("git", "-C", root, "config", "--get", "core.hooksPath").CombinedOutput(); err == nil {
		t.Fatalf("core.hooksPath is set: %q", out)
	}
}

// A submodule's git dir, under .git/modules by its path, is guarded the
// same, even after a command removed its HEAD.
func TestSubmoduleGitDirStaysProtected(t *testing.T) {
	needSandbox(t)
	other, root := newRepo(t), newRepo(t)
	gitIn(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", other, "lib/x")
	gitIn(t, root, "commit", "-qm", "submodule")
	mod := filepath.Join(root, ".git", "modules", "lib", "x")
	config, _ := os.ReadFile(filepath.Join(mod, "config"))
	p := Policy{Dir: root, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}}
	if r := run(t, p, "cd lib/x && git status --short && git log --oneline | wc -l"); r.code != 0 || strings.TrimSpace(r.out) != "1" {
		t.Fatalf("git in the submodule failed: exit %d\n%s", r.code, r.out)
	}
	for _, attack := range []string{
		"echo x > " + mod + "/hooks/pre-commit",
		"cd lib/x && git config core.hooksPath /tmp/evil",
		"mv " + filepath.Join(root, ".git", "modules", "lib") + " " + filepath.Join(root, ".git", "modules", "moved"),
		"rm -f " + mod + "/HEAD; echo x > " + mod + "/hooks/pre-commit",
		"echo x > " + mod + "/hooks/pre-commit", // again, with no HEAD there
		"echo 'gitdir: /tmp/evil' > lib/x/.git",
	} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded:\n%s", attack, r.out)
		}
	}
	checkGitIntact(t, mod, config)
	if b, _ := os.ReadFile(filepath.Join(root, "lib", "x", ".git")); !strings.Contains(string(b), "modules/lib/x") {
		t.Fatalf("the submodule's .git file changed: %q", b)
	}
}

// Hooks kept in the work tree (core.hooksPath = .husky/_, as husky sets
// it) stay read-only too: the person's next commit runs them.
func TestHooksPathInTheWorkTreeStaysReadOnly(t *testing.T) {
	needSandbox(t)
	root := newRepo(t)
	if err := os.MkdirAll(filepath.Join(root, ".husky", "_"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "config", "core.hooksPath", ".husky/_")
	p := Policy{Dir: root, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}}
	for _, attack := range []string{"echo x > .husky/pre-commit", "echo x > .husky/_/pre-commit", "mv .husky .h", "rm -rf .husky"} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded:\n%s", attack, r.out)
		}
	}
	for _, name := range []string{".husky/pre-commit", ".husky/_/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if r := run(t, p, "echo ok > other.txt && cat other.txt"); r.code != 0 {
		t.Fatalf("the rest of the work tree is not writable: exit %d\n%s", r.code, r.out)
	}
}

// A git dir named through a symbolic link to a place the command cannot
// write gets nothing made there: not hooks, not info.
func TestGitDirThroughALinkMakesNothingOutside(t *testing.T) {
	needSandbox(t)
	root, outside := t.TempDir(), t.TempDir()
	for _, name := range []string{"HEAD", "config"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte("extensions.worktreeConfig\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: link\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, Policy{Dir: root}, "echo ran"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.out)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 2 {
		t.Fatalf("the sandbox made %v outside the writable dirs", entries)
	}
}
