package natsstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/natsstore"
	"github.com/agentteam/agentteam/internal/statefile"
	"github.com/agentteam/agentteam/internal/storetest"
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
	if v, err := d.Read(); err != nil || v.Counter != 100 || v.Version != 0 {
		t.Fatalf("a missing document read %+v, %v; want the empty one", v, err)
	}
	if _, err := d.Update(func(v **versioned) error { (*v).Counter++; return statefile.ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Read(); v.Counter != 100 || v.Version != 0 {
		t.Fatalf("a change that said ErrNoChange was stored: %+v", v)
	}
	for range 2 {
		if _, err := d.Update(func(v **versioned) error { (*v).Counter++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var after error
	d.Submit(func(v **versioned) error { (*v).Counter++; return nil }, func(err error) { after = err })
	d.Flush()
	if v, _ := d.Read(); v.Counter != 103 || v.Version != 3 || after != nil {
		t.Fatalf("after three changes read %+v (submit: %v); want counter 103 at version 3", v, after)
	}
}
