package natsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// WorkerTTL is how long a worker's heartbeat key lives without being
// renewed: a worker that stops beating for this long is taken for dead.
// Workers renew theirs every WorkerTTL/3.
const WorkerTTL = 6 * time.Second

// WorkersBucket is the name of team's KV bucket of worker heartbeats.
func WorkersBucket(team string) string { return "agentteam_" + team + "_workers" }

// Workers are the heartbeats of a team's workers: one KV key per worker
// (its id), kept alive by Beat; a key not renewed within WorkerTTL expires
// with its bucket's age limit, so Alive no longer lists that worker.
type Workers struct {
	kv   jetstream.KeyValue
	team string
}

// OpenWorkers opens team's heartbeat bucket on nc, creating it if it is
// not there. nc stays the caller's to close.
func OpenWorkers(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Workers, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open the workers of %s: %w", team, err)
	}
	n := replicasOf(opts)
	kv, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		if kv, err := js.KeyValue(ctx, WorkersBucket(team)); err == nil {
			return kv, nil
		}
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   WorkersBucket(team),
			TTL:      WorkerTTL,
			History:  1,
			Storage:  jetstream.MemoryStorage,
			Replicas: max(n, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("open the workers of %s: %w", team, replicaSentence(n, err))
	}
	return &Workers{kv: kv, team: team}, nil
}

// Beat renews worker id's heartbeat with info (what the worker says of
// itself: its host, its labels).
func (w *Workers) Beat(ctx context.Context, id string, info []byte) error {
	if err := checkToken("worker", id); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if _, err := w.kv.Put(ctx, id, info); err != nil {
		return fmt.Errorf("heartbeat of worker %s: %w", id, err)
	}
	return nil
}

// Gone removes worker id's heartbeat at once: a worker that stops cleanly
// says so instead of letting it expire.
func (w *Workers) Gone(ctx context.Context, id string) error {
	if err := checkToken("worker", id); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := w.kv.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("heartbeat of worker %s: %w", id, err)
	}
	return nil
}

// Alive lists the workers whose heartbeat has not expired, with what each
// said of itself.
func (w *Workers) Alive(ctx context.Context) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	lister, err := w.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the workers of %s: %w", w.team, err)
	}
	defer func() { _ = lister.Stop() }()
	alive := map[string][]byte{}
	for key := range lister.Keys() {
		e, err := w.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list the workers of %s: %w", w.team, err)
		}
		alive[key] = e.Value()
	}
	return alive, nil
}
