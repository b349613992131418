package natsstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

// With Replicas(3) the registry's bucket and the event log keep their
// contracts on a 3-node cluster while the node leading the bucket is shut
// down in the middle of the racing updates: 0 updates lost, no reader sees
// the counter go back; then the event log contract holds on the two nodes
// left.
func TestClusterKeepsTheDocAndEventContractsWhileTheBucketLeaderGoesDown(t *testing.T) {
	c := startCluster(t)
	const team = "copies"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc := connect(t, c.urls, natsconn.ConnectOptions{})
	// The team is first opened without copies, as an older client would:
	// one copy each. Opened with Replicas(3), the event stream is changed to
	// three (the bucket is, by the first open of the run below).
	if _, err := natsstore.OpenEventLog(ctx, nc, team); err != nil {
		t.Fatal(err)
	}
	if _, err := natsstore.OpenDoc[counterDoc](ctx, nc, team, "registry"); err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	streams := []string{"KV_" + natsstore.BucketName(team), natsstore.EventStreamName(team)}
	replicas := func(name string) int {
		t.Helper()
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config.Replicas
	}
	for _, name := range streams {
		if n := replicas(name); n != 1 {
			t.Fatalf("%s opened without copies has %d", name, n)
		}
	}
	if _, err := natsstore.OpenEventLog(ctx, nc, team, natsstore.Replicas(3)); err != nil {
		t.Fatal(err)
	}
	var (
		calls  int
		killer sync.WaitGroup
		killed = make(chan string, 1)
	)
	t.Cleanup(killer.Wait)
	outer := t
	storetest.RunDoc(t, storetest.DocOpener[counterDoc]{
		Open: func(t *testing.T) storetest.Doc[counterDoc] {
			t.Helper()
			nc := connect(t, c.urls, natsconn.ConnectOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := natsstore.OpenDoc[counterDoc](ctx, nc, team, "registry", natsstore.Replicas(3))
			if err != nil {
				t.Fatal(err)
			}
			calls++
			switch calls {
			case 1: // the racing run's base: stop the leader once 200 of 800 updates are in
				killer.Add(1)
				go func() {
					defer killer.Done()
					killed <- stopBucketLeaderAfter(outer, c, team, 200)
				}()
			case 7: // the next subtest: the node must have gone during the race
				if len(killed) == 0 {
					outer.Error("the racing run ended before a node was stopped")
				}
			}
			return d
		},
		Inc:   func(c *counterDoc) { c.Counter++ },
		Count: func(c counterDoc) int { return c.Counter },
	})
	killer.Wait()
	if name := <-killed; name == "" {
		t.Fatal("no node was stopped mid-run")
	} else {
		t.Logf("stopped %s, the bucket's leader, during the racing updates", name)
	}
	eventLogContract(t, func(t *testing.T) *natsstore.EventLog { return openEventLogR3(t, c, team) })
	// Opened again without a count (one node down), both keep three copies.
	// A context of its own: the run above may have outlived the first one
	// on a loaded machine.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := natsstore.OpenEventLog(ctx, nc, team); err != nil {
		t.Fatal(err)
	}
	if _, err := natsstore.OpenDoc[counterDoc](ctx, nc, team, "registry"); err != nil {
		t.Fatal(err)
	}
	for _, name := range streams {
		if n := replicas(name); n != 3 {
			t.Errorf("%s: %d copies, want 3", name, n)
		}
	}
}

// stopBucketLeaderAfter waits until team's bucket has taken n updates,
// then shuts down the node leading it and returns its name ("" if it never
// got there within a bound).
func stopBucketLeaderAfter(t *testing.T, c *cluster, team string, n uint64) string {
	return stopStreamLeaderAfter(t, c, "KV_"+natsstore.BucketName(team), n)
}

// stopStreamLeaderAfter is stopBucketLeaderAfter for any stream.
func stopStreamLeaderAfter(t *testing.T, c *cluster, stream string, n uint64) string {
	nc := connect(t, c.urls, natsconn.ConnectOptions{})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Error(err)
		return ""
	}
	// Its own loop, not testkit's: it runs on a goroutine of its own, where
	// t.Fatal may not be called.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := js.Stream(ctx, stream)
		var info *jetstream.StreamInfo
		if err == nil {
			info, err = st.Info(ctx)
		}
		cancel()
		if err != nil || info.State.LastSeq < n || info.Cluster == nil || info.Cluster.Leader == "" {
			continue
		}
		node := c.node(info.Cluster.Leader)
		if node == nil {
			t.Errorf("the leader %q is no node of the cluster", info.Cluster.Leader)
			return ""
		}
		t.Logf("stopping %s after %d updates", info.Cluster.Leader, info.State.LastSeq)
		node.Shutdown()
		return info.Cluster.Leader
	}
	t.Errorf("%s never took %d updates", stream, n)
	return ""
}

// More copies than a lone server can keep is one sentence that says what
// to do, for each of the three.
func TestReplicasOnALoneServerSaySoInOneSentence(t *testing.T) {
	nc := connect(t, startServer(t), natsconn.ConnectOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, errM := natsstore.OpenMailbox(ctx, nc, "lone", natsstore.Replicas(3))
	_, errD := natsstore.OpenDoc[counterDoc](ctx, nc, "lone", "registry", natsstore.Replicas(3))
	_, errE := natsstore.OpenEventLog(ctx, nc, "lone", natsstore.Replicas(3))
	for i, err := range []error{errM, errD, errE} {
		if err == nil || !strings.Contains(err.Error(), "3 copies need a JetStream cluster") {
			t.Errorf("open %d with 3 copies on one server: %v", i, err)
		}
	}
}

// openEventLogR3 is team's event log kept on the cluster's three nodes, on
// a connection of its own, as another process opens it.
func openEventLogR3(t *testing.T, c *cluster, team string) *natsstore.EventLog {
	t.Helper()
	nc := connect(t, c.urls, natsconn.ConnectOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := natsstore.OpenEventLog(ctx, nc, team, natsstore.Replicas(3))
	if err != nil {
		t.Fatal(err)
	}
	return l
}
