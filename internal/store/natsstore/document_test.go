package natsstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

type counterDoc struct {
	Counter int `json:"counter"`
}

// The KV document keeps the compare-and-set contract of the registry and
// the task board: racing updaters on several connections lose nothing.
func TestKVDocKeepsTheDocContract(t *testing.T) {
	url := startServer(t)
	storetest.RunDoc(t, storetest.DocOpener[counterDoc]{
		Open: func(t *testing.T) storetest.Doc[counterDoc] {
			nc, err := nats.Connect(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			d, err := natsstore.OpenDoc[counterDoc](context.Background(), nc, "t6", "config")
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		Inc:   func(c *counterDoc) { c.Counter++ },
		Count: func(c counterDoc) int { return c.Counter },
	})
}

// versioned counts its changes as the registry and the board do.
type versioned struct {
	Version int `json:"version"`
	Counter int `json:"counter"`
}

func (v *versioned) Changed() { v.Version++ }

// The document keeps the file document's rules: a missing one is empty(),
// ErrNoChange stores nothing, a stored change is counted once.
func TestKVDocKeepsTheFileDocRules(t *testing.T) {
	nc, err := nats.Connect(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	d, err := natsstore.OpenDocWith(context.Background(), nc, "t8", "board",
		func() *versioned { return &versioned{Counter: 100} })
	if err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read(t.Context()); err != nil || v.Counter != 100 || v.Version != 0 {
		t.Fatalf("a missing document read %+v, %v; want the empty one", v, err)
	}
	if _, err := d.Update(t.Context(), func(v **versioned) error { (*v).Counter++; return statefile.ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Read(t.Context()); v.Counter != 100 || v.Version != 0 {
		t.Fatalf("a change that said ErrNoChange was stored: %+v", v)
	}
	for range 2 {
		if _, err := d.Update(t.Context(), func(v **versioned) error { (*v).Counter++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var after error
	d.Submit(t.Context(), func(v **versioned) error { (*v).Counter++; return nil }, func(err error) { after = err })
	d.Flush()
	if v, _ := d.Read(t.Context()); v.Counter != 103 || v.Version != 3 || after != nil {
		t.Fatalf("after three changes read %+v (submit: %v); want counter 103 at version 3", v, after)
	}
}

// Submitted changes share compare-and-sets as the file's share writes
// (a write per change was most of a JetStream run's CPU): 50
// submits make far fewer revisions, none is lost, and each after is
// called, in submission order, with the change stored.
func TestKVDocBatchesSubmittedChanges(t *testing.T) {
	nc, err := nats.Connect(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	d, err := natsstore.OpenDocWith(ctx, nc, "t9", "board", func() *versioned { return &versioned{} })
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, natsstore.BucketName("t9"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	var order []int // written by the afters, read after Flush
	for i := range n {
		d.Submit(t.Context(), func(v **versioned) error { (*v).Counter++; return nil }, func(err error) {
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
			}
			order = append(order, i)
		})
	}
	d.Flush()
	e, err := kv.Get(ctx, "board")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Read(t.Context()); v.Counter != n || v.Version != n {
		t.Fatalf("after %d submits read %+v; want counter and version %d", n, v, n)
	}
	if e.Revision() >= n {
		t.Fatalf("%d submits made %d revisions; want them batched", n, e.Revision())
	}
	if len(order) != n {
		t.Fatalf("%d afters were called; want %d", len(order), n)
	}
	for i, j := range order {
		if i != j {
			t.Fatalf("afters came in the order %v; want submission order", order)
		}
	}
	t.Logf("%d submits, %d revisions", n, e.Revision())
}

// Two submitted changes of one key never share a compare-and-set: the
// after of each finds its own value stored (the registry writes a
// teammate's status event only once that status is stored).
func TestKVDocKeyedChangesEachHaveTheirWrite(t *testing.T) {
	nc, err := nats.Connect(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	d, err := natsstore.OpenDocWith(context.Background(), nc, "t10", "board", func() *versioned { return &versioned{} })
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan int, 3)
	read := func(error) {
		v, err := d.Read(t.Context())
		if err != nil {
			t.Error(err)
		}
		seen <- v.Counter
	}
	d.SubmitKeyed(t.Context(), "a", func(v **versioned) error { (*v).Counter = 1; return nil }, read)
	d.SubmitKeyed(t.Context(), "b", func(v **versioned) error { return nil }, func(error) {})
	d.SubmitKeyed(t.Context(), "a", func(v **versioned) error { (*v).Counter = 2; return nil }, read)
	d.Flush()
	if a, b := <-seen, <-seen; a != 1 || b != 2 {
		t.Fatalf("the afters of two changes of one key read %d and %d; want 1 then 2", a, b)
	}
}
