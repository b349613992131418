package natsstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// WorkerTTL is how long a worker's heartbeat lives without being renewed:
// a worker that stops beating for this long is taken for dead, and its
// teammates are respawned elsewhere. Workers renew theirs every
// WorkerFence/4.
const WorkerTTL = 6 * time.Second

// WorkerFence is how long a worker goes on without a renewal the server
// confirmed before it takes itself for cut off and stops its teammates:
// shorter than WorkerTTL, so it has stopped them before its heartbeat
// expires and they are respawned elsewhere.
const WorkerFence = 4 * time.Second

// Workers are the heartbeats of a team's workers: a lease per worker in
// the team's lease bucket (key workers.ID, valued with what the worker
// says of itself), held by Hold and followed by Watch. One worker id is
// held by one process at a time.
type Workers struct {
	ls *Leases
}

// workerPrefix prefixes the heartbeat keys in the lease bucket.
const workerPrefix = "workers."

// OpenWorkers opens team's heartbeats: its lease bucket on nc (OpenLeases).
func OpenWorkers(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Workers, error) {
	ls, err := OpenLeases(ctx, nc, team, opts...)
	if err != nil {
		return nil, err
	}
	return &Workers{ls: ls}, nil
}

// NewWorkers are the heartbeats kept in ls.
func NewWorkers(ls *Leases) *Workers { return &Workers{ls: ls} }

// Hold takes worker id's heartbeat with info (its host, its labels) and
// keeps it alive (every WorkerFence/4) until Release, or until it is lost:
// no renewal confirmed within WorkerFence, or the key written by another.
// While another process holds id (or its heartbeat has not yet expired)
// the error is ErrHeld.
func (w *Workers) Hold(ctx context.Context, id string, info []byte) (*Lease, error) {
	if err := checkToken("worker", id); err != nil {
		return nil, err
	}
	l, err := w.ls.AcquireFenced(ctx, workerPrefix+id, info, WorkerTTL, WorkerFence)
	if err != nil {
		return nil, fmt.Errorf("heartbeat of worker %s: %w", id, err)
	}
	return l, nil
}

// WorkerChange is a worker's heartbeat seen (Info) or gone (expired or
// released).
type WorkerChange struct {
	ID   string
	Info []byte
	Gone bool
}

// Watch reports the workers' heartbeats: first each present one, then
// every change; current is closed once the present ones are all given.
// The channel is closed once ctx ends.
func (w *Workers) Watch(ctx context.Context) (changes <-chan WorkerChange, current <-chan struct{}, err error) {
	in, err := w.ls.watch(ctx, workerPrefix+">", true)
	if err != nil {
		return nil, nil, fmt.Errorf("watch the workers: %w", err)
	}
	out := make(chan WorkerChange)
	cur := make(chan struct{})
	go func() {
		defer close(out)
		for c := range in {
			if c.current {
				// out is unbuffered: every earlier change has been taken.
				close(cur)
				continue
			}
			id, ok := strings.CutPrefix(c.Key, workerPrefix)
			if !ok {
				continue
			}
			select {
			case out <- WorkerChange{ID: id, Info: c.Value, Gone: c.Gone}:
			case <-ctx.Done():
			}
		}
	}()
	return out, cur, nil
}

// Alive lists the workers whose heartbeat is alive now, with what each
// said of itself.
func (w *Workers) Alive(ctx context.Context) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	changes, current, err := w.Watch(ctx)
	if err != nil {
		return nil, err
	}
	alive := map[string][]byte{}
	for {
		select {
		case c, ok := <-changes:
			if !ok {
				return nil, fmt.Errorf("list the workers: %w", ctx.Err())
			}
			if c.Gone {
				delete(alive, c.ID)
			} else {
				alive[c.ID] = c.Info
			}
		case <-current:
			// What came before current is the present; drain nothing more.
			cancel()
			for range changes {
			}
			return alive, nil
		}
	}
}
