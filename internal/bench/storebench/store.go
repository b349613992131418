//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// mailbox is what the benchmarks use of a store: the methods of
// team.Mailbox that `agentteam send` and a waiting teammate call.
type mailbox interface {
	Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error)
	ReadUnread(ctx context.Context, name string) (inbox.Batch, error)
	Commit(ctx context.Context, name string, b inbox.Batch) error
	Watch(ctx context.Context, name string) <-chan struct{}
}

// storeConf says which store a child process opens; it travels in the
// environment (storeEnv).
type storeConf struct {
	name     string // as printed: "files /tmp", "JetStream R1"…
	dir      string // files: the inbox directory
	urls     string // JetStream: the client URLs
	team     string
	replicas int
}

const storeEnv = "STOREBENCH_STORE"

func (s storeConf) env() string {
	return storeEnv + "=" + strings.Join([]string{s.dir, s.urls, s.team, strconv.Itoa(s.replicas)}, "|")
}

func confFromEnv() (storeConf, error) {
	f := strings.Split(os.Getenv(storeEnv), "|")
	if len(f) != 4 {
		return storeConf{}, fmt.Errorf("%s is not set as the harness sets it", storeEnv)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil {
		return storeConf{}, fmt.Errorf("%s: replicas %q: %w", storeEnv, f[3], err)
	}
	return storeConf{dir: f[0], urls: f[1], team: f[2], replicas: n}, nil
}

// open opens the store as agentteam's commands do (internal/launch/store.go): the
// files with inbox.NewStore, a team's inboxes on a server with
// natsstore.OpenMailbox on one connection.
func (s storeConf) open() (mailbox, func(), error) {
	if s.urls == "" {
		st := inbox.NewStore(s.dir)
		return st, func() { _ = st.Close() }, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, s.urls, natsconn.ConnectOptions{Name: "storebench"})
	if err != nil {
		return nil, nil, err
	}
	var opts []natsstore.MailboxOption
	if s.replicas > 0 {
		opts = append(opts, natsstore.Replicas(s.replicas))
	}
	mb, err := natsstore.OpenMailbox(ctx, nc, s.team, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return mb, nc.Close, nil
}
