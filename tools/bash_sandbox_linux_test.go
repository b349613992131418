//go:build linux

package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/sys/sandbox"
)

// sandboxEnv is a teammate's Env with the sandbox on, or a skip saying why
// this machine has none.
func sandboxEnv(t *testing.T) Env {
	t.Helper()
	if err := sandbox.Check(context.Background(), true); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI's kernel sandboxes commands, but here: %v", err)
		}
		t.Skipf("no sandbox on this machine: %v", err)
	}
	env, _, _, _ := testEnv(t)
	env.Agent = "alice"
	env.Sandbox = Sandbox{On: true, Network: true, TempDir: t.TempDir(),
		Env: sandbox.Environ(os.Environ(), nil, []string{"OPENAI_API_KEY"})}
	return env
}

func TestSandboxedBashWorks(t *testing.T) {
	env := sandboxEnv(t)
	root := env.Workspace.Root
	r := runBounded(t, context.Background(), env, `echo hi > a.txt && cat a.txt | tr a-z A-Z && echo "tmp=$TMPDIR" && touch "$TMPDIR/t" && echo again`)
	mustOK(t, r, "HI\n")
	mustOK(t, r, "tmp="+filepath.Join(env.Sandbox.TempDir, "alice")+"\n")
	mustOK(t, r, "again")
	if _, err := os.Stat(filepath.Join(env.Sandbox.TempDir, "alice", "t")); err != nil {
		t.Fatalf("the agent's temp dir was not writable: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "hi\n" {
		t.Fatalf("a.txt = %q", b)
	}
	// A second command in the same tool set works the same.
	mustOK(t, runBounded(t, context.Background(), env, "cat a.txt"), "hi")
}

// TestSandboxedGoHasAWritableBuildCache: Go's default build cache is under
// HOME, which the sandbox keeps read-only, so go build and go test failed in
// every sandboxed command. The agent gets its own cache in its temp dir,
// unless the person chose one or made the default one writable.
func TestSandboxedGoHasAWritableBuildCache(t *testing.T) {
	env := sandboxEnv(t)
	env.Sandbox.Env = sandbox.SetEnv(sandbox.SetEnv(env.Sandbox.Env, "HOME", t.TempDir()), "XDG_CACHE_HOME", "")
	r := runBounded(t, context.Background(), env, `mkdir -p "$GOCACHE" && touch "$GOCACHE/x" && echo "cache=$GOCACHE"`)
	mustOK(t, r, "cache="+filepath.Join(env.Sandbox.TempDir, "alice", "go-build")+"\n")

	home := t.TempDir()
	shared := Env(env)
	shared.Agent = "bob"
	shared.Sandbox.Env = sandbox.SetEnv(env.Sandbox.Env, "HOME", home)
	shared.Sandbox.Writable = []string{filepath.Join(home, ".cache")}
	mustOK(t, runBounded(t, context.Background(), shared, `echo "cache=[$GOCACHE]"`), "cache=[]\n")

	chosen := Env(env)
	chosen.Agent = "carol"
	chosen.Sandbox.Env = sandbox.SetEnv(env.Sandbox.Env, "GOCACHE", "/somewhere/chosen")
	mustOK(t, runBounded(t, context.Background(), chosen, `echo "cache=$GOCACHE"`), "cache=/somewhere/chosen\n")
}

func TestSandboxedBashCannotWriteOutside(t *testing.T) {
	env := sandboxEnv(t)
	outside := t.TempDir()
	r := runBounded(t, context.Background(), env, "echo x > "+outside+"/escape.txt")
	if isSuccess(r) {
		t.Fatalf("a write outside the workspace succeeded: %s", r.Content)
	}
	if _, err := os.Stat(filepath.Join(outside, "escape.txt")); err == nil {
		t.Fatal("escape.txt was written outside the workspace")
	}
}

func TestSandboxedBashHidesSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-sandbox-test-key")
	t.Setenv("GITHUB_TOKEN", "ghp-sandbox-test-token")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-sandbox-test-secret")
	env := sandboxEnv(t)
	r := runBounded(t, context.Background(), env, `env; tr '\0' '\n' < /proc/$PPID/environ; cat /proc/*/environ | tr '\0' '\n'`)
	for _, secret := range []string{"sk-sandbox-test-key", "ghp-sandbox-test-token", "aws-sandbox-test-secret"} {
		if strings.Contains(r.Content, secret) {
			t.Fatalf("the command read %s:\n%s", secret, r.Content)
		}
	}
	mustOK(t, r, "PATH=")
}

// Plan mode before approval: with the sandbox, no command writes, whatever
// program it runs; reading still works.
func TestSandboxedPlanModeWritesNothing(t *testing.T) {
	env := sandboxEnv(t)
	env.Gate = closedGate{}
	root := env.Workspace.Root
	writeTestFile(t, filepath.Join(root, "notes.txt"), "a\na\n")
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "notes.txt")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes")
	before := listTree(t, root)
	ctx := context.Background()
	for _, attack := range []string{"uniq notes.txt out", "find . -fprint0 f", "file -C -m x", "git grep -O'rm' a notes.txt", "touch new.txt", "echo x > notes.txt"} {
		r := runBounded(t, ctx, env, attack)
		if isSuccess(r) && attack != "git grep -O'rm' a notes.txt" && attack != "file -C -m x" {
			t.Errorf("%q succeeded in plan mode: %s", attack, r.Content)
		}
	}
	if after := listTree(t, root); after != before {
		t.Fatalf("plan mode let a command change the workspace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	r := runBounded(t, ctx, env, "cat notes.txt | uniq -c && git log --oneline | wc -l")
	mustOK(t, r, "2 a")
	r = runBounded(t, ctx, env, "touch new.txt")
	mustOK(t, r, "plan mode")
}

// listTree is every path under root with its content, one a line: equal
// lists, unchanged tree.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(rel + " " + string(data) + "\n")
		} else {
			b.WriteString(rel + "/\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
