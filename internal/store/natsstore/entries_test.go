package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// openEntries opens team's bucket "reg" on a connection of its own, as
// another process would; values are the data as a string.
func openEntries(t *testing.T, url, team string) *natsstore.Entries {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	e, err := natsstore.OpenEntries(context.Background(), nc, team, "reg", func(_ string, data []byte) any { return string(data) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// What one process stored before another's Sync is in that one's copy
// once Sync returns: reads from the copy are as fresh as the server's.
func TestEntriesSyncSeesWhatWasStoredBefore(t *testing.T) {
	url := startServer(t)
	writer, reader := openEntries(t, url, "sync"), openEntries(t, url, "sync")
	var rev uint64
	for i := range 200 {
		want := fmt.Sprintf(`"v%d"`, i)
		r, lost, err := writer.Put(t.Context(), []string{"k"}, [][]byte{[]byte(want)}, []uint64{rev})
		if err != nil || lost {
			t.Fatalf("put %d: lost %v, %v", i, lost, err)
		}
		rev = r
		if err := reader.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if v, got, ok := reader.Get("k"); !ok || v != want || got != rev {
			t.Fatalf("after Sync the reader has %v at revision %d (ok %v), want %s at %d", v, got, ok, want, rev)
		}
	}
}

// A change of several entries is stored whole or not at all: one stale
// revision refuses the batch, and the other entry keeps its value.
func TestEntriesBatchIsAllOrNothing(t *testing.T) {
	url := startServer(t)
	a, b := openEntries(t, url, "batch"), openEntries(t, url, "batch")
	r1, lost, err := a.Put(t.Context(), []string{"x", "y"}, [][]byte{[]byte("1"), []byte("1")}, []uint64{0, 0})
	if err != nil || lost {
		t.Fatalf("first batch: lost %v, %v", lost, err)
	}
	// b changes y meanwhile.
	if _, lost, err := b.Put(t.Context(), []string{"y"}, [][]byte{[]byte("2")}, []uint64{r1}); err != nil || lost {
		t.Fatalf("b's change: lost %v, %v", lost, err)
	}
	// a's batch still expects y at r1: refused, x untouched.
	if _, lost, err := a.Put(t.Context(), []string{"x", "y"}, [][]byte{[]byte("3"), []byte("3")}, []uint64{r1 - 1, r1}); err != nil || !lost {
		t.Fatalf("a batch with a stale revision: lost %v, %v; want lost", lost, err)
	}
	c := openEntries(t, url, "batch")
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	c.View(func(k string, v any, _ uint64) { got[k] = v })
	if got["x"] != "1" || got["y"] != "2" {
		t.Fatalf("after the refused batch the bucket holds %v, want x 1 and y 2", got)
	}
}

// A deleted entry is gone from reads and is made again by compare-and-set
// on the revision of its deletion.
func TestEntriesDeletedEntryIsMadeAgain(t *testing.T) {
	url := startServer(t)
	e := openEntries(t, url, "del")
	r, _, err := e.Put(t.Context(), []string{"k"}, [][]byte{[]byte("1")}, []uint64{0})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err = e.Put(t.Context(), []string{"k"}, [][]byte{nil}, []uint64{r}); err != nil {
		t.Fatal(err)
	}
	other := openEntries(t, url, "del")
	if err := other.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := other.Get("k"); ok {
		t.Fatal("a deleted entry is still read")
	}
	_, rev, _ := other.Get("k")
	if rev != r {
		t.Fatalf("the deleted entry's revision is %d, want %d", rev, r)
	}
	if _, lost, err := other.Put(t.Context(), []string{"k"}, [][]byte{[]byte("2")}, []uint64{rev}); err != nil || lost {
		t.Fatalf("made again: lost %v, %v", lost, err)
	}
}

// On a cluster with three copies, racing compare-and-sets of one entry
// from four processes lose nothing while the bucket's leader goes down
// mid-run, and a process opened afterwards reads the sum.
func TestClusterKeepsTheEntriesContractWhileTheBucketLeaderGoesDown(t *testing.T) {
	c := startCluster(t)
	const team, instances, workers, each = "entries", 4, 5, 40
	open := func() *natsstore.Entries {
		nc := connect(t, c.urls, natsconn.ConnectOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e, err := natsstore.OpenEntries(ctx, nc, team, "reg", func(_ string, data []byte) any {
			n, _ := strconv.Atoi(string(data))
			return n
		}, natsstore.Replicas(3))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	inc := func(e *natsstore.Entries) error {
		v, rev, ok := e.Get("counter")
		for range 1000 {
			n, _ := v.(int)
			if !ok && rev == 0 {
				n = 0
			}
			_, lost, err := e.Put(t.Context(), []string{"counter"}, [][]byte{[]byte(strconv.Itoa(n + 1))}, []uint64{rev})
			if err != nil || !lost {
				return err
			}
			if v, rev, ok, err = e.Fetch(t.Context(), "counter"); err != nil {
				return err
			}
		}
		return errors.New("lost the race 1000 times")
	}
	es := make([]*natsstore.Entries, instances)
	for i := range es {
		es[i] = open()
	}
	killed := make(chan string, 1)
	var killer sync.WaitGroup
	t.Cleanup(killer.Wait)
	killer.Add(1)
	go func() {
		defer killer.Done()
		killed <- stopStreamLeaderAfter(t, c, "KV_"+natsstore.EntriesBucket(team, "reg"), 200)
	}()
	var wg sync.WaitGroup
	for _, e := range es {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if err := inc(e); err != nil {
						t.Errorf("increment: %v", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if name := <-killed; name == "" {
		t.Fatal("no node was stopped mid-run")
	}
	reader := open()
	if err := reader.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := reader.Get("counter"); v != instances*workers*each {
		t.Fatalf("the counter is %v after %d increments", v, instances*workers*each)
	}
}

// The watch that keeps a copy fresh ran on the node that leads the
// bucket's stream; once that node stops, the watch brings nothing until
// its consumer is made again after missed heartbeats, and Sync, which
// waited for it alone, failed ("the watch did not bring revision …":
// spawns failed this way in TestClusterFailover). Sync now reads what the
// watch has not brought from the stream's new leader.
func TestClusterSyncReadsOnWhenTheWatchsNodeStops(t *testing.T) {
	c := startCluster(t)
	const team = "watchlag"
	stream := "KV_" + natsstore.EntriesBucket(team, "reg")
	open := func(url string) *natsstore.Entries {
		nc := connect(t, url, natsconn.ConnectOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e, err := natsstore.OpenEntries(ctx, nc, team, "reg", func(_ string, data []byte) any { return string(data) }, natsstore.Replicas(3))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	first := open(c.urls)
	if _, lost, err := first.Put(t.Context(), []string{"k"}, [][]byte{[]byte("before")}, []uint64{0}); err != nil || lost {
		t.Fatalf("put: lost %v, %v", lost, err)
	}
	leader := streamLeader(t, c, stream)
	var others []string
	for i, name := range c.names {
		if name != leader {
			others = append(others, c.nodes[i].ClientURL())
		}
	}
	reader, writer := open(others[0]), open(others[1])
	if err := reader.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := reader.Get("k"); v != "before" {
		t.Fatalf("the reader has %v, want before", v)
	}
	c.node(leader).Shutdown()
	_, rev, _, err := writer.Fetch(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, lost, err := writer.Put(t.Context(), []string{"k", "j"}, [][]byte{[]byte("after"), []byte("new")}, []uint64{rev, 0}); err != nil || lost {
		t.Fatalf("put after the stop: lost %v, %v", lost, err)
	}
	if err := reader.Sync(t.Context()); err != nil {
		t.Fatalf("Sync after the watch's node stopped: %v", err)
	}
	if k, _, _ := reader.Get("k"); k != "after" {
		t.Errorf("k is %v after Sync, want after", k)
	}
	if j, _, ok := reader.Get("j"); !ok || j != "new" {
		t.Errorf("j is %v (ok %v) after Sync, want new", j, ok)
	}
}

// Processes that open a team's new bucket at once all open it: one makes
// it and allows batches, and the others' create of the plain bucket is
// refused as "stream name already in use" (seen once in cmd's
// TestAskOfAKilledRunOnJetStreamIsAbandoned); they open it as it is.
func TestEntriesOpenedAtOnceByManyProcesses(t *testing.T) {
	url := startServer(t)
	for round := range 20 {
		team := fmt.Sprintf("once%d", round)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc, err := nats.Connect(url)
				if err != nil {
					errs <- err
					return
				}
				defer nc.Close()
				e, err := natsstore.OpenEntries(context.Background(), nc, team, "reg", func(_ string, data []byte) any { return string(data) })
				if err != nil {
					errs <- err
					return
				}
				e.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}
