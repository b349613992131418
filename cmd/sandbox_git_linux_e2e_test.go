//go:build linux

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// personGit runs git in dir as the person would afterwards, their own
// config and hooks on, in a repository another user may own.
func personGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
	c.Dir = dir
	c.Env = append(cleanEnv(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// initRepo makes the user's workspace a repository with notes.txt
// committed and an identity of its own, the user's.
func initRepo(t *testing.T, u sandboxUser) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	personGit(t, u.ws, "init", "-q", "-b", "main")
	personGit(t, u.ws, "config", "user.name", "Tester")
	personGit(t, u.ws, "config", "user.email", "tester@example.com")
	testWriteFile(t, filepath.Join(u.ws, "notes.txt"), "one\n")
	personGit(t, u.ws, "add", "-A")
	personGit(t, u.ws, "commit", "-qm", "start")
	u.own(t)
}

// gitPlants are what a command would leave in .git for the person's next
// git to run: a hook, core.hooksPath and core.fsmonitor in the config (by
// git and by a lock file renamed over it), a filter in info/attributes,
// and a .git of its own in place of the repository's.
const gitPlants = `printf '#!/bin/sh\ntouch HOOK-RAN\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; ` +
	`git config core.hooksPath /tmp; git config core.fsmonitor 'touch FSMONITOR-RAN'; ` +
	`cp .git/config .git/config.lock && echo '[core] hooksPath = /tmp' >> .git/config.lock && mv .git/config.lock .git/config; ` +
	`echo '* filter=evil' > .git/info/attributes; ` +
	`mv .git .git-old && git init -q && printf '#!/bin/sh\ntouch HOOK-RAN\n' > .git/hooks/pre-commit; echo PLANTS-TRIED`

// gitWork is a model's ordinary git work, which must go on.
const gitWork = `set -e; echo new > new.txt; git add new.txt; git commit -qm model-commit; git checkout -qb model-branch; ` +
	`echo changed > notes.txt; git stash -q; git stash list | grep -q stash; git stash pop -q; git commit -qam model-second; echo WORK-OK`

// The lead's commands try to plant what the person's next plain git
// commit runs; none of it is there afterwards, and the person's commit
// runs nothing. The lead's own git add, commit, checkout -b and stash work.
func TestBashCannotPlantGitHooksThroughTheBinary(t *testing.T) {
	needSandbox(t)
	for _, who := range sandboxUsers() {
		t.Run(who.name, func(t *testing.T) {
			u := newSandboxUser(t, who.uid)
			initRepo(t, u)
			config, err := os.ReadFile(filepath.Join(u.ws, ".git", "config"))
			if err != nil {
				t.Fatal(err)
			}

			srv := fakellm.New(bashLead(gitPlants, gitWork))
			defer srv.Close()
			r := u.run(t, fakeEnv(srv), "run", "--sandbox", sandboxFlag(), "plant a hook")
			mustSucceed(t, r, "run")
			noViolations(t, srv)
			res := toolResults(t, u.ws, "lead")
			if len(res) != 2 || !strings.Contains(res[0], "PLANTS-TRIED") {
				t.Fatalf("the commands did not run as planned: %q", res)
			}

			gd := filepath.Join(u.ws, ".git")
			if b, err := os.ReadFile(filepath.Join(gd, "config")); err != nil || string(b) != string(config) {
				t.Errorf("a command changed .git/config: %q (%v)", b, err)
			}
			for _, p := range []string{".git/hooks/pre-commit", ".git/info/attributes", ".git-old"} {
				if _, err := os.Lstat(filepath.Join(u.ws, p)); err == nil {
					t.Errorf("a command made %s", p)
				}
			}
			if !strings.Contains(res[1], "exit code: 0\n") || !strings.Contains(res[1], "WORK-OK") {
				t.Fatalf("the model's git work failed: %s", res[1])
			}
			if got := personGit(t, u.ws, "log", "--format=%s", "model-branch"); got != "model-second\nmodel-commit\nstart\n" {
				t.Errorf("the model's commits: %q", got)
			}
			personGit(t, u.ws, "commit", "-q", "--allow-empty", "-m", "the person's")
			personGit(t, u.ws, "status", "--short")
			for _, p := range []string{"HOOK-RAN", "FSMONITOR-RAN"} {
				if _, err := os.Lstat(filepath.Join(u.ws, p)); err == nil {
					t.Errorf("the person's git ran what a command wrote (%s)", p)
				}
			}
		})
	}
}

// A teammate in a worktree cannot point its .git file elsewhere, nor
// remove it, nor write the shared hooks; git status works there.
func TestTeammateCannotRewriteItsGitFileThroughTheBinary(t *testing.T) {
	needSandbox(t)
	for _, who := range sandboxUsers() {
		t.Run(who.name, func(t *testing.T) {
			u := newSandboxUser(t, who.uid)
			initRepo(t, u)
			attack := fmt.Sprintf(`mkdir -p evil/hooks; echo "gitdir: $PWD/evil" > .git; rm -f .git; mv .git moved; `+
				`echo x > %s/hooks/pre-commit; echo TRIED`, filepath.Join(u.ws, ".git"))
			script := func(c fakellm.Call) fakellm.Reply {
				msgs := c.Req.Messages
				if c.Agent == "alice" {
					if n := countCalls(msgs, "bash"); n < 2 {
						return useTool("bash", fmt.Sprintf(`{"command":%q}`, []string{attack, "git status --short && echo STATUS-OK && cat .git"}[n]))
					}
					return fakellm.Reply{Content: "alice: tried"}
				}
				if !called(msgs, "spawn_teammate") {
					return useTool("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"look around","isolation":"worktree"}`)
				}
				return fakellm.Reply{Content: "lead: noted"}
			}
			srv := fakellm.New(script)
			defer srv.Close()
			r := u.run(t, fakeEnv(srv), "run", "--sandbox", sandboxFlag(), "one teammate")
			mustSucceed(t, r, "run")
			noViolations(t, srv)
			res := toolResults(t, u.ws, "alice")
			if len(res) != 2 || !strings.Contains(res[0], "TRIED") || !strings.Contains(res[1], "STATUS-OK") {
				t.Fatalf("alice's commands did not run as planned: %q", res)
			}
			// Its worktree, with no change in it, is gone after the run: its
			// second command shows the .git file.
			if !strings.Contains(res[1], "gitdir: "+filepath.Join(u.ws, ".git", "worktrees", "alice")+"\n") {
				t.Fatalf("alice's .git file changed: %s", res[1])
			}
			if _, err := os.Lstat(filepath.Join(u.ws, ".git", "hooks", "pre-commit")); err == nil {
				t.Fatal("alice wrote the shared pre-commit hook")
			}
		})
	}
}

// A repository whose .git the user may not write, without hooks/, does not
// keep the user's commands from running: the sandbox makes nothing there,
// and the command could not either.
func TestUnwritableGitDirStillRunsCommandsThroughTheBinary(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the repository to one user and the run to another")
	}
	u := newSandboxUser(t, nobody)
	initRepo(t, u)
	gd := filepath.Join(u.ws, ".git")
	if err := os.RemoveAll(filepath.Join(gd, "hooks")); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(gd, 0, 0); err != nil {
		t.Fatal(err)
	}
	srv := fakellm.New(bashLead("echo RAN"))
	defer srv.Close()
	mustSucceed(t, u.run(t, fakeEnv(srv), "run", "--sandbox", sandboxFlag(), "run one command"), "run")
	if res := toolResults(t, u.ws, "lead"); len(res) != 1 || !strings.Contains(res[0], "exit code: 0\nRAN") {
		t.Fatalf("the command did not run: %q", res)
	}
	if _, err := os.Stat(filepath.Join(gd, "hooks")); err == nil {
		t.Fatal("hooks/ was made in a git dir the user may not write")
	}
}
