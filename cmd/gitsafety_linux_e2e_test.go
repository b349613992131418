//go:build linux

package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// hostileGitConfig is config sending every file of the driver ev, every
// diff and every commit through prog's programs, each named after who.
func hostileGitConfig(prog, who string) string {
	return fmt.Sprintf("[filter \"ev\"]\n\tclean = %[1]s %[2]s-clean\n\tsmudge = %[1]s %[2]s-smudge\n"+
		"[diff \"ev\"]\n\ttextconv = %[1]s %[2]s-textconv\n\tcommand = %[1]s %[2]s-diff-command\n"+
		"[diff]\n\texternal = %[1]s %[2]s-external\n[merge \"ev\"]\n\tdriver = %[1]s %[2]s-merge\n"+
		"[core]\n\tfsmonitor = %[1]s-fsmonitor\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = %[1]s-gpg\n", prog, who)
}

// gitAttackScript: the lead's bash writes a hostile .git/config and
// .git/info/attributes, then it spawns alice in a worktree, whose bash
// adds a line to notes.txt, commits a .gitattributes naming the driver
// and makes a repository of its own (hostile config again) inside its
// worktree, then reports: agentteam checks out, commits and diffstats
// alice's work with that config in force. With her result in, the lead's
// bash commits a change of its own to notes.txt (its own git told to run
// none of it), so merging alice merges that file.
func gitAttackScript(prog string) fakellm.Script {
	lead := "cat >> .git/config <<'EOF'\n" + hostileGitConfig(prog, "lead") + "EOF\n" +
		"echo '* filter=ev diff=ev merge=ev' >> .git/info/attributes && echo STAGED"
	leadCommit := "printf 'zero\\none\\ntwo\\nthree\\n' > notes.txt && git -c filter.ev.clean= -c filter.ev.smudge= " +
		"-c core.fsmonitor=false -c commit.gpgSign=false commit --quiet -am lead && echo COMMITTED"
	alice := "echo four >> notes.txt && echo '* filter=ev diff=ev merge=ev' > .gitattributes && " +
		"echo hers > alice.txt && mkdir sub && cd sub && git init --quiet && echo x > f && git add f && " +
		"git -c user.name=alice -c user.email=alice@example.com commit --quiet -m sub && " +
		"cat >> .git/config <<'EOF'\n" + hostileGitConfig(prog, "nested") + "EOF\n" +
		"echo '* filter=ev diff=ev merge=ev' > .gitattributes && echo y > f && echo STAGED"
	return func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		bash := func(cmd string) fakellm.Reply { return useTool("bash", fmt.Sprintf(`{"command":%q}`, cmd)) }
		if c.Agent == "alice" {
			if !called(msgs, "bash") {
				return bash(alice)
			}
			return fakellm.Reply{Content: "alice: done"}
		}
		switch {
		case !called(msgs, "bash"):
			return bash(lead)
		case !called(msgs, "spawn_teammate"):
			return useTool("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"add line four","isolation":"worktree"}`)
		case results(msgs, "alice") >= 1 && countCalls(msgs, "bash") == 1:
			return bash(leadCommit)
		case countCalls(msgs, "bash") == 2:
			return fakellm.Reply{Content: "lead: done"}
		}
		return fakellm.Reply{Content: "lead: waiting"}
	}
}

// evilGitProgram is a program that leaves a marker (its environment) in
// marks for each run, and its wrappers for settings run without a shell.
func evilGitProgram(t *testing.T, dir string) (prog, marks string) {
	t.Helper()
	marks = filepath.Join(dir, "marks")
	if err := os.Mkdir(marks, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(marks, 0o777); err != nil { // whatever the umask: nobody writes here too
		t.Fatal(err)
	}
	prog = filepath.Join(dir, "evil")
	scripts := map[string]string{prog: "#!/bin/sh\nenv > '" + marks + "'/\"$1\"\nexit 1\n"}
	for _, name := range []string{"fsmonitor", "gpg"} {
		scripts[prog+"-"+name] = "#!/bin/sh\nexec '" + prog + "' " + name + "\n"
	}
	for path, text := range scripts {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return prog, marks
}

// gitAttack runs the attack with run, then `agentteam diff` and
// `agentteam merge` of alice, and fails for every hostile program that
// ran. run runs the binary in ws with env; prog and marks are the evil
// program's.
func gitAttack(t *testing.T, ws, prog, marks string, run func(env []string, args ...string) result) {
	t.Helper()
	s := newSecrets()
	srv := fakellm.New(gitAttackScript(prog), fakellm.WithAPIKey(s.key))
	defer srv.Close()
	defer noMarksLeft(t, marks, s) // also when a step fails the test
	// The sandbox is off: however the config got there (a model without the
	// sandbox, or past it), agentteam's git must not run it.
	r := run(s.env(srv), "run", "--sandbox", "off", "get line four added")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if res := toolResults(t, ws, "lead"); len(res) != 3 || !strings.Contains(res[0], "STAGED") || !strings.Contains(res[2], "COMMITTED") {
		t.Fatalf("the lead's commands did not run as planned: %q\n%s", res, r.stderr)
	}
	if cfg, err := os.ReadFile(filepath.Join(ws, ".git", "config")); err != nil || !strings.Contains(string(cfg), prog+" lead-clean") {
		t.Fatalf("the lead's bash did not write the hostile config (%v):\n%s\n%s", err, cfg, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentteam", "worktrees", "alice", "sub", ".git", "config")); err != nil {
		t.Fatalf("alice's bash did not make its repository: %v\n%s", err, r.stderr)
	}
	d := run(nil, "diff", "alice")
	mustSucceed(t, d, "diff")
	if !strings.Contains(d.stdout, "+++ b/alice.txt") {
		t.Errorf("diff alice lacks alice.txt:\n%s\n%s", d.stdout, d.stderr)
	}
	m := run(nil, "merge", "alice")
	mustSucceed(t, m, "merge")
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "zero\none\ntwo\nthree\nfour\n" {
		t.Errorf("notes.txt after the merge = %q, %v\n%s", data, err, m.stderr)
	}
}

// noMarksLeft fails for every program of the evil one's that ran.
func noMarksLeft(t *testing.T, marks string, s secrets) {
	t.Helper()
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Error(err)
	}
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(marks, e.Name()))
		leaked := ""
		if bytes.Contains(data, []byte(s.key)) {
			leaked = ", with the model's key in its environment"
		}
		t.Errorf("agentteam's git ran the model's program %q%s", e.Name(), leaked)
	}
}

// A model's hostile git config, attributes and nested repository run
// nothing when agentteam checks out, commits, diffs and merges a
// teammate's worktree, through the binary.
func TestAgentteamsGitRunsNoProgramOfTheModelsThroughTheBinary(t *testing.T) {
	ws := gitRepo(t)
	prog, marks := evilGitProgram(t, t.TempDir())
	gitAttack(t, ws, prog, marks, func(env []string, args ...string) result {
		return runBin(t, ws, env, "", args...)
	})
}

// The same as a normal user: CI runs as root, so the test drops to nobody
// (uid 65534) itself.
func TestAgentteamsGitRunsNoProgramOfTheModelsAsANormalUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestAgentteamsGitRunsNoProgramOfTheModelsThroughTheBinary already runs as a normal user")
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "agentteam-nobody-git-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, home := filepath.Join(dir, "agentteam"), filepath.Join(dir, "home")
	copyFile(t, binary(t), bin, 0o755)
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := gitRepo(t)
	prog, marks := evilGitProgram(t, dir)
	// The workspace moves where nobody can reach it, and becomes nobody's.
	moved := filepath.Join(dir, "ws")
	if err := os.Rename(ws, moved); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{moved, home} {
		if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
	}
	gitAttack(t, moved, prog, marks, func(env []string, args ...string) result {
		return runAsNobody(t, bin, moved, home, env, args...)
	})
}

// runAsNobody is runBin as uid and gid 65534 with the binary bin and HOME home.
func runAsNobody(t *testing.T, bin, dir, home string, env []string, args ...string) result {
	t.Helper()
	return runCommand(t, bin, dir, append([]string{"HOME=" + home}, env...), "", &syscall.Credential{Uid: 65534, Gid: 65534}, args...)
}
