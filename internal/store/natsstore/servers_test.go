package natsstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// start runs a server with o on 127.0.0.1 and a random port unless o says
// otherwise, stopped when t ends.
func start(t *testing.T, o natsserver.ServerOptions) *natsserver.Server {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	s, err := natsserver.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string, o natsconn.ConnectOptions) *nats.Conn {
	t.Helper()
	nc, err := natsconn.Connect(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// violations collects a connection's asynchronous errors (a refused
// subscription is reported this way).
type violations struct {
	mu   sync.Mutex
	errs []error
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	v.mu.Lock()
	v.errs = append(v.errs, err)
	v.mu.Unlock()
}

// waitFor polls v until one error says want, within a bound.
func (v *violations) waitFor(t *testing.T, want string) {
	t.Helper()
	testkit.EventuallyF(t, 10*time.Second, fmt.Sprintf("an asynchronous error that says %q", want), func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return slices.ContainsFunc(v.errs, func(err error) bool {
			return strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want))
		})
	}, func() string {
		v.mu.Lock()
		defer v.mu.Unlock()
		return fmt.Sprintf("got %v", v.errs)
	})
}
