package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// An ask approved with --always allows that command, not the pattern its
// glob would make: `rm -f *.log` must not let `rm -f -r src .git x.log` run.
func TestPermissionAlwaysAllowsOnlyTheApprovedCommand(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"rm -f *.log"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"rm -f -r src x.log"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	for _, f := range []string{"a.log", "src/main.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := fakeEnv(srv)

	wait := startBin(t, ws, env, "run", "--permission-mode", "ask", "--permission-delegate", "user", "--permission-timeout", "60s", "go")
	first := waitForAsk(t, ws, env)
	mustSucceed(t, runBin(t, ws, env, "", "approve", "--always", first.RequestID), "approve --always")
	second := waitForAnotherAsk(t, ws, env, first.RequestID)
	if !strings.Contains(second.Command, "-r src") {
		t.Fatalf("the second ask is for %q", second.Command)
	}
	mustSucceed(t, runBin(t, ws, env, "", "deny", second.RequestID, "no"), "deny")
	mustSucceed(t, wait(), "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "a.log")); !os.IsNotExist(err) {
		t.Errorf("the approved rm -f *.log did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "src", "main.go")); err != nil {
		t.Fatalf("rm -f -r src ran: %v", err)
	}
	cfg, err := os.ReadFile(filepath.Join(ws, ".agentteam", "config.toml"))
	if err != nil || !strings.Contains(string(cfg), `"bash(rm -f \\*.log)"`) {
		t.Fatalf("the project file does not hold the escaped rule: %q, %v", cfg, err)
	}

	// The next run reads the rule from the file: it still allows only that.
	srv2 := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"rm -f -r src x.log"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "--permission-mode", "ask", "go"), "second run")
	if _, err := os.Stat(filepath.Join(ws, "src", "main.go")); err != nil {
		t.Fatalf("rm -f -r src ran on the rule from the project file: %v", err)
	}
	if res := toolResults(t, ws, "lead"); len(res) != 1 || !strings.Contains(res[0], "permission denied") {
		t.Fatalf("the second run's tool results %q", res)
	}
}

// waitForAnotherAsk polls `agentteam requests --json` until an ask other
// than not waits, and returns it.
func waitForAnotherAsk(t *testing.T, ws string, env []string, not string) permask.Ask {
	t.Helper()
	var another permask.Ask
	testkit.Eventually(t, time.Minute, "a second permission ask in agentteam requests", func() bool {
		asks := requestsJSON(t, ws, env)
		i := slices.IndexFunc(asks, func(a permask.Ask) bool { return a.RequestID != not })
		if i >= 0 {
			another = asks[i]
		}
		return i >= 0
	})
	return another
}
