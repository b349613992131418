package cmd

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/internal/natsstore"
)

// The twin of TestAskOfAKilledRunIsAbandoned on a NATS store, with every
// other command in another directory (as on another host): while the run
// holds the team's owner lease, a second run is refused with one sentence
// naming the host that runs it; once the run is killed with SIGKILL, its
// lease expires (natsstore.OwnerTTL) and its ask is abandoned, not
// waiting; a later run's own ask is the only one listed.
func TestAskOfAKilledRunOnJetStreamIsAbandoned(t *testing.T) {
	s, err := natsstore.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	store := []string{"AGENTTEAM_STORE=" + s.ClientURL() + "/killed"}
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo first > first.txt"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo second > second.txt"}`)}},
		fakellm.Reply{Content: "could not"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws, elsewhere := t.TempDir(), t.TempDir()
	env := append(fakeEnv(srv), store...)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binPath, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user",
		"--permission-timeout", "10m", "make it")
	c.Dir = ws
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	first := waitForAsk(t, elsewhere, store)
	if first.State != askWaiting || first.Command != "echo first > first.txt" {
		t.Fatalf("the first ask is %+v", first)
	}

	// Another run of the team, from another directory: refused in one sentence.
	host, _ := os.Hostname()
	other := runBin(t, elsewhere, env, "", "run", "make it too")
	if other.code == 0 || !strings.Contains(other.stderr, "already running team killed") ||
		!strings.Contains(other.stderr, "host "+host) || strings.Count(strings.TrimSpace(other.stderr), "\n") != 0 {
		t.Fatalf("a second run while the first runs: exit %d:\n%s", other.code, other.stderr)
	}

	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	killed := time.Now()
	// The lease outlives the killed run by its TTL: until then the ask
	// still counts as waiting. Poll with a bound.
	for {
		asks := requestsJSON(t, elsewhere, store)
		if len(asks) == 0 {
			t.Logf("the ask was abandoned %v after the kill (owner TTL %v)", time.Since(killed).Round(time.Millisecond), natsstore.OwnerTTL)
			break
		}
		if time.Since(killed) > natsstore.OwnerTTL+20*time.Second {
			t.Fatalf("the killed run's ask still waits %v after the kill: %+v", time.Since(killed), asks)
		}
		time.Sleep(200 * time.Millisecond) // a poll with a bound
	}
	all := requestsJSON(t, elsewhere, store, "--all")
	if len(all) != 1 || all[0].RequestID != first.RequestID || all[0].State != askAbandoned {
		t.Errorf("requests --all = %+v, want %s abandoned", all, first.RequestID)
	}
	for _, args := range [][]string{{"approve", first.RequestID}, {"deny", first.RequestID, "no"}} {
		r := runBin(t, elsewhere, store, "", args...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, "is gone") {
			t.Errorf("%s of the abandoned ask: exit %d, want %d saying the asking process is gone:\n%s", args[0], r.code, ExitFailure, r.stderr)
		}
	}

	// A new run asks again: only its own ask waits.
	wait := startBin(t, ws, env, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user", "make it again")
	second := waitForAsk(t, elsewhere, store)
	if second.RequestID == first.RequestID || second.Command != "echo second > second.txt" {
		t.Fatalf("the second run's ask is %+v (the first was %s)", second, first.RequestID)
	}
	if asks := requestsJSON(t, elsewhere, store); len(asks) != 1 {
		t.Errorf("with a new run, requests lists %d asks, want only its own: %+v", len(asks), asks)
	}
	if r := runBin(t, elsewhere, store, "", "approve", first.RequestID); r.code != ExitFailure || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("approve of the killed run's ask while another run runs: exit %d:\n%s", r.code, r.stderr)
	}
	mustSucceed(t, runBin(t, elsewhere, store, "", "deny", second.RequestID, "not now"), "deny")
	mustSucceed(t, wait(), "run")
}
