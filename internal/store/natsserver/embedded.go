package natsserver

import (
	"github.com/nats-io/nats-server/v2/server"
)

// StartLocal starts an embedded NATS server with JetStream, listening on
// 127.0.0.1 at a port the system picks, asking no credentials and keeping
// its data under dir. Stop it with Shutdown and WaitForShutdown. It is the
// server of tests; `agentteam serve` runs Start with its flags.
func StartLocal(dir string) (*server.Server, error) {
	s, err := Start(ServerOptions{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		return nil, err
	}
	return s.NATS(), nil
}
