package cmd

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// startNATSAt runs agentteam's embedded server on addr with its data in dir,
// so that a test can stop it and start it again where clients look for it.
func startNATSAt(t *testing.T, addr, dir string) *natsserver.Server {
	t.Helper()
	s, err := natsserver.Start(natsserver.ServerOptions{Listen: addr, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// freeAddr is a 127.0.0.1 address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runUntilTheServerGoes starts `agentteam run` with args on a team of the
// embedded server at addr (data in dir), whose lead's model answers after a
// minute; once the lead asks it, the server is stopped for good. It returns
// the run's result and how long it ran after the server went away.
func runUntilTheServerGoes(t *testing.T, addr, dir string, args ...string) (result, time.Duration) {
	t.Helper()
	s := startNATSAt(t, addr, dir)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			s.Shutdown()
		}
	})
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{Content: "too late", Delay: time.Minute}},
	}, nil), fakellm.WithAPIKey("test-key"))
	t.Cleanup(srv.Close)
	wait, _ := startBinWithin(t, 4*time.Minute, t.TempDir(), fakeEnv(srv), append([]string{"run"}, args...)...)
	testkit.Eventually(t, time.Minute, "the lead's model call", func() bool { return srv.CallsFor("lead") > 0 })
	s.Shutdown()
	stopped = true
	gone := time.Now()
	r := wait()
	return r, time.Since(gone)
}

// The NATS server goes away while `agentteam run` waits for its model and
// stays away: the run ends with its --timeout's sentence and exit code soon
// after its deadline, not after a store call's own bound (10 s) for each of
// the lead's next steps and of its ending, one after another (80 s past a
// 20 s --timeout before the fix). The server back, what was written is there.
func TestARunWhoseNATSServerWentAwayEndsByItsTimeout(t *testing.T) {
	addr, dir := freeAddr(t), t.TempDir()
	url := "nats://" + addr + "/gone"
	const timeout = 10 * time.Second
	r, took := runUntilTheServerGoes(t, addr, dir, "--store", url, "--timeout", timeout.String(), "say done")
	if r.code != exit.Timeout || !strings.Contains(r.stderr, "the run timed out after 10s") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	// storeGoneGrace and room for a loaded host past the deadline (the
	// server went away before it); a store call per step of the ending
	// took minutes.
	if took > timeout+30*time.Second {
		t.Fatalf("the run ended %s after its server went away, with a --timeout of %s; stderr:\n%s", took.Round(time.Second), timeout, r.stderr)
	}

	s := startNATSAt(t, addr, dir)
	defer s.Shutdown()
	env := []string{"AGENTTEAM_STORE=" + url}
	tj := runBin(t, t.TempDir(), env, "", "team", "--json")
	mustSucceed(t, tj, "team --json once the server is back")
	var c struct{ TeamName string }
	if err := json.Unmarshal([]byte(tj.stdout), &c); err != nil || c.TeamName != "gone" {
		t.Errorf("team --json once the server is back: %v\n%s", err, tj.stdout)
	}
}

// The same, with no --timeout: the run's owner lease is lost with the
// server, which halts the team, and the run ends with that sentence soon
// after (17 s here), not after a store call's own bound for each step of
// the lead and of the ending (67 s before the fix).
func TestARunWhoseNATSServerWentAwayEndsWhenItsOwnerLeaseIsLost(t *testing.T) {
	addr, dir := freeAddr(t), t.TempDir()
	r, took := runUntilTheServerGoes(t, addr, dir, "--store", "nats://"+addr+"/lost", "say done")
	if r.code == 0 || !strings.Contains(r.stderr, "lost the team's owner lock") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	// The lease's 10 s, storeGoneGrace and room for a loaded host.
	if took > 45*time.Second {
		t.Fatalf("the run ended %s after its server went away; stderr:\n%s", took.Round(time.Second), r.stderr)
	}
}
