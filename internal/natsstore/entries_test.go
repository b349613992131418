package natsstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/natsstore"
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
		r, lost, err := writer.Put([]string{"k"}, [][]byte{[]byte(want)}, []uint64{rev})
		if err != nil || lost {
			t.Fatalf("put %d: lost %v, %v", i, lost, err)
		}
		rev = r
		if err := reader.Sync(); err != nil {
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
	r1, lost, err := a.Put([]string{"x", "y"}, [][]byte{[]byte("1"), []byte("1")}, []uint64{0, 0})
	if err != nil || lost {
		t.Fatalf("first batch: lost %v, %v", lost, err)
	}
	// b changes y meanwhile.
	if _, lost, err := b.Put([]string{"y"}, [][]byte{[]byte("2")}, []uint64{r1}); err != nil || lost {
		t.Fatalf("b's change: lost %v, %v", lost, err)
	}
	// a's batch still expects y at r1: refused, x untouched.
	if _, lost, err := a.Put([]string{"x", "y"}, [][]byte{[]byte("3"), []byte("3")}, []uint64{r1 - 1, r1}); err != nil || !lost {
		t.Fatalf("a batch with a stale revision: lost %v, %v; want lost", lost, err)
	}
	c := openEntries(t, url, "batch")
	if err := c.Sync(); err != nil {
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
	r, _, err := e.Put([]string{"k"}, [][]byte{[]byte("1")}, []uint64{0})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err = e.Put([]string{"k"}, [][]byte{nil}, []uint64{r}); err != nil {
		t.Fatal(err)
	}
	other := openEntries(t, url, "del")
	if err := other.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := other.Get("k"); ok {
		t.Fatal("a deleted entry is still read")
	}
	_, rev, _ := other.Get("k")
	if rev != r {
		t.Fatalf("the deleted entry's revision is %d, want %d", rev, r)
	}
	if _, lost, err := other.Put([]string{"k"}, [][]byte{[]byte("2")}, []uint64{rev}); err != nil || lost {
		t.Fatalf("made again: lost %v, %v", lost, err)
	}
}
