package natsstore

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StartLocal starts an embedded NATS server with JetStream, listening on
// 127.0.0.1 at a port the system picks and keeping its data under dir.
// Stop it with Shutdown and WaitForShutdown. It is the server of tests and
// of a team on one host; `agentteam serve` (listen address, routes,
// credentials) is to come.
func StartLocal(dir string) (*server.Server, error) {
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded NATS server: not ready for connections after 10s")
	}
	return s, nil
}
