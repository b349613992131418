package natsstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
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
