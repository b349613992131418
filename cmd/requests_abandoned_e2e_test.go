package cmd

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/permask"
)

// requestsJSON is `agentteam requests --json` (with more args).
func requestsJSON(t *testing.T, ws string, env []string, args ...string) []permask.Ask {
	t.Helper()
	r := runBin(t, ws, env, "", append([]string{"requests", "--json"}, args...)...)
	mustSucceed(t, r, "requests")
	var asks []permask.Ask
	if err := json.Unmarshal([]byte(r.stdout), &asks); err != nil {
		t.Fatalf("requests --json printed %q: %v", r.stdout, err)
	}
	return asks
}

// killedAsk is what the abandoned-ask tests share, on the store the
// environment store selects (nil: the files): a run in ws whose lead asks
// to run a command, its ask seen by `requests` in from, whileRunning
// called, then the run killed with SIGKILL. It returns the killed run's
// ask and the environment (the fake model's and store) for what follows.
func killedAsk(t *testing.T, ws, from string, store []string, whileRunning func(env []string)) (permask.Ask, []string) {
	t.Helper()
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo first > first.txt"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo second > second.txt"}`)}},
		fakellm.Reply{Content: "could not"},
	), fakellm.WithAPIKey("test-key"))
	t.Cleanup(srv.Close)
	env := append(fakeEnv(srv), store...)
	wait, pid := startBinWithin(t, 90*time.Second, ws, env, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user",
		"--permission-timeout", "10m", "make it")
	first := waitForAsk(t, from, store)
	if first.State != permask.Waiting || first.Command != "echo first > first.txt" {
		t.Fatalf("the first ask is %+v", first)
	}
	if whileRunning != nil {
		whileRunning(env)
	}
	if err := syscall.Kill(pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait() // killed: its exit says so
	return first, env
}

// checkAbandoned checks, from from, that the killed run's ask first is
// listed only by `requests --all`, as abandoned, and that approve and
// deny say the asking process is gone.
func checkAbandoned(t *testing.T, from string, store []string, first permask.Ask) {
	t.Helper()
	all := requestsJSON(t, from, store, "--all")
	if len(all) != 1 || all[0].RequestID != first.RequestID || all[0].State != permask.Abandoned {
		t.Errorf("requests --all = %+v, want %s abandoned", all, first.RequestID)
	}
	for _, args := range [][]string{{"approve", first.RequestID}, {"deny", first.RequestID, "no"}} {
		r := runBin(t, from, store, "", args...)
		if r.code != exit.Failure || !strings.Contains(r.stderr, "is gone") {
			t.Errorf("%s of the abandoned ask: exit %d, want %d saying the asking process is gone:\n%s", args[0], r.code, exit.Failure, r.stderr)
		}
	}
}

// checkNewRunAsksAlone starts a new run in ws: its own ask is the only one
// listed, the killed run's ask first still cannot be approved, and the
// new one is denied from from, which ends the run.
func checkNewRunAsksAlone(t *testing.T, ws, from string, env, store []string, first permask.Ask) {
	t.Helper()
	wait := startBin(t, ws, env, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user", "make it again")
	second := waitForAsk(t, from, store)
	if second.RequestID == first.RequestID || second.Command != "echo second > second.txt" {
		t.Fatalf("the second run's ask is %+v (the first was %s)", second, first.RequestID)
	}
	if asks := requestsJSON(t, from, store); len(asks) != 1 {
		t.Errorf("with a new run, requests lists %d asks, want only its own: %+v", len(asks), asks)
	}
	if r := runBin(t, from, store, "", "approve", first.RequestID); r.code != exit.Failure || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("approve of the killed run's ask while another run runs: exit %d:\n%s", r.code, r.stderr)
	}
	mustSucceed(t, runBin(t, from, store, "", "deny", second.RequestID, "not now"), "deny")
	mustSucceed(t, wait(), "run")
}

// A run killed with SIGKILL while its ask waits leaves the ask in the
// inboxes with nobody waiting for it: requests no longer lists it (--all
// shows it abandoned), approve and deny say the asking process is gone,
// and a later run's own ask is the only one listed.
func TestAskOfAKilledRunIsAbandoned(t *testing.T) {
	ws := t.TempDir()
	first, env := killedAsk(t, ws, ws, nil, nil)
	if asks := requestsJSON(t, ws, env); len(asks) != 0 {
		t.Errorf("requests lists the ask of a killed run as waiting: %+v", asks)
	}
	checkAbandoned(t, ws, env, first)
	human := runBin(t, ws, env, "", "requests", "--all")
	mustSucceed(t, human, "requests --all")
	if !strings.Contains(human.stdout, first.RequestID) || !strings.Contains(human.stdout, "abandoned") {
		t.Errorf("requests --all does not show the ask abandoned:\n%s", human.stdout)
	}
	checkNewRunAsksAlone(t, ws, ws, env, env, first)
}
