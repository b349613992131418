package natsstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/natsstore"
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
