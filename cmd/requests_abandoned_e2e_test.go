package cmd

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/fakellm"
)

// requestsJSON is `agentteam requests --json` (with more args).
func requestsJSON(t *testing.T, ws string, env []string, args ...string) []ask {
	t.Helper()
	r := runBin(t, ws, env, "", append([]string{"requests", "--json"}, args...)...)
	mustSucceed(t, r, "requests")
	var asks []ask
	if err := json.Unmarshal([]byte(r.stdout), &asks); err != nil {
		t.Fatalf("requests --json printed %q: %v", r.stdout, err)
	}
	return asks
}

// A run killed with SIGKILL while its ask waits leaves the ask in the
// inboxes with nobody waiting for it: requests no longer lists it (--all
// shows it abandoned), approve and deny say the asking process is gone,
// and a later run's own ask is the only one listed.
func TestAskOfAKilledRunIsAbandoned(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo first > first.txt"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo second > second.txt"}`)}},
		fakellm.Reply{Content: "could not"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := fakeEnv(srv)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binPath, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user",
		"--permission-timeout", "10m", "make it")
	c.Dir = ws
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	first := waitForAsk(t, ws, env)
	if first.State != askWaiting || first.Command != "echo first > first.txt" {
		t.Fatalf("the first ask is %+v", first)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait() // killed: its error says so

	if asks := requestsJSON(t, ws, env); len(asks) != 0 {
		t.Errorf("requests lists the ask of a killed run as waiting: %+v", asks)
	}
	all := requestsJSON(t, ws, env, "--all")
	if len(all) != 1 || all[0].RequestID != first.RequestID || all[0].State != askAbandoned {
		t.Errorf("requests --all = %+v, want %s abandoned", all, first.RequestID)
	}
	human := runBin(t, ws, env, "", "requests", "--all")
	mustSucceed(t, human, "requests --all")
	if !strings.Contains(human.stdout, first.RequestID) || !strings.Contains(human.stdout, "abandoned") {
		t.Errorf("requests --all does not show the ask abandoned:\n%s", human.stdout)
	}
	for _, args := range [][]string{{"approve", first.RequestID}, {"deny", first.RequestID, "no"}} {
		r := runBin(t, ws, env, "", args...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, "is gone") {
			t.Errorf("%s of the abandoned ask: exit %d, want %d saying the asking process is gone:\n%s", args[0], r.code, ExitFailure, r.stderr)
		}
	}

	// A new run asks again: only its own ask waits, the killed run's does not.
	wait := startBin(t, ws, env, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user", "make it again")
	second := waitForAsk(t, ws, env)
	if second.RequestID == first.RequestID || second.Command != "echo second > second.txt" {
		t.Fatalf("the second run's ask is %+v (the first was %s)", second, first.RequestID)
	}
	if asks := requestsJSON(t, ws, env); len(asks) != 1 {
		t.Errorf("with a new run, requests lists %d asks, want only its own: %+v", len(asks), asks)
	}
	if r := runBin(t, ws, env, "", "approve", first.RequestID); r.code != ExitFailure || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("approve of the killed run's ask while another run runs: exit %d:\n%s", r.code, r.stderr)
	}
	mustSucceed(t, runBin(t, ws, env, "", "deny", second.RequestID, "not now"), "deny")
	mustSucceed(t, wait(), "run")
}
