package cmd

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The twin of TestAskOfAKilledRunIsAbandoned on a NATS store, with every
// other command in another directory (as on another host): while the run
// holds the team's owner lease, a second run is refused with one sentence
// naming the host that runs it; once the run is killed with SIGKILL, its
// lease expires (natsstore.OwnerTTL) and its ask is abandoned, not
// waiting; a later run's own ask is the only one listed.
func TestAskOfAKilledRunOnJetStreamIsAbandoned(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	store := []string{"AGENTTEAM_STORE=" + s.ClientURL() + "/killed"}
	ws, elsewhere := t.TempDir(), t.TempDir()
	first, env := killedAsk(t, ws, elsewhere, store, func(env []string) {
		// Another run of the team, from another directory: refused in one sentence.
		host, _ := os.Hostname()
		other := runBin(t, elsewhere, env, "", "run", "make it too")
		if other.code == 0 || !strings.Contains(other.stderr, "already running team killed") ||
			!strings.Contains(other.stderr, "host "+host) || strings.Count(strings.TrimSpace(other.stderr), "\n") != 0 {
			t.Fatalf("a second run while the first runs: exit %d:\n%s", other.code, other.stderr)
		}
	})
	killed := time.Now()
	// The lease outlives the killed run by its TTL: until then the ask
	// still counts as waiting.
	var asks []permask.Ask
	testkit.EventuallyF(t, natsstore.OwnerTTL+20*time.Second, "the killed run's ask to be abandoned", func() bool {
		asks = requestsJSON(t, elsewhere, store)
		return len(asks) == 0
	}, func() string { return fmt.Sprintf("it still waits: %+v", asks) })
	t.Logf("the ask was abandoned %v after the kill (owner TTL %v)", time.Since(killed).Round(time.Millisecond), natsstore.OwnerTTL)
	checkAbandoned(t, elsewhere, store, first)
	checkNewRunAsksAlone(t, ws, elsewhere, env, store, first)
}
