package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/statefile"
)

// maxCASTries bounds how often Update reads again after losing a race; it
// is only reached by a document changed without pause by many writers.
const maxCASTries = 1000

// Doc is one JSON document (the registry, the task board) in the team's KV
// bucket, changed only by compare-and-set on its revision: an Update that
// raced another reads the new revision and applies its change again. It is
// the file document's contract (statefile.Doc): a missing document reads
// as empty(), a change function returning statefile.ErrNoChange stores
// nothing, and a stored change is counted first when T has a Changed
// method (the registry's and the board's version and time).
type Doc[T any] struct {
	kv    jetstream.KeyValue
	key   string
	empty func() T
}

// changer is a document that counts its changes.
type changer interface{ Changed() }

// BucketName is the name of team's KV bucket.
func BucketName(team string) string { return "agentteam_" + team }

// OpenDoc opens the document key of team on nc, creating the bucket if it
// is not there; a missing document is T's zero value. nc stays the
// caller's to close.
func OpenDoc[T any](ctx context.Context, nc *nats.Conn, team, key string) (*Doc[T], error) {
	return OpenDocWith(ctx, nc, team, key, func() T { var v T; return v })
}

// OpenDocWith is OpenDoc whose missing document is empty().
func OpenDocWith[T any](ctx context.Context, nc *nats.Conn, team, key string, empty func() T) (*Doc[T], error) {
	if err := checkToken("team", team); err != nil {
		return nil, err
	}
	if err := checkToken("document", key); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: %w", key, team, err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:  BucketName(team),
		History: 1,
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: bucket: %w", key, team, err)
	}
	return &Doc[T]{kv: kv, key: key, empty: empty}, nil
}

// get returns the document and its revision; a missing one is empty() at
// revision 0.
func (d *Doc[T]) get(ctx context.Context) (T, uint64, error) {
	v := d.empty()
	e, err := d.kv.Get(ctx, d.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return v, 0, nil
	}
	if err != nil {
		return v, 0, fmt.Errorf("read %s: %w", d.key, err)
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return v, 0, fmt.Errorf("read %s: revision %d is not a document: %w", d.key, e.Revision(), err)
	}
	return v, e.Revision(), nil
}

// Read returns the document; a missing one is the zero value.
func (d *Doc[T]) Read() (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	v, _, err := d.get(ctx)
	return v, err
}

// Update applies fn to the current document and stores the result if no
// one stored another revision meanwhile, else reads again and retries. An
// error from fn stores nothing and is returned.
func (d *Doc[T]) Update(fn func(*T) error) (T, error) {
	var zero T
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	for range maxCASTries {
		v, rev, err := d.get(ctx)
		if err != nil {
			return zero, err
		}
		switch err := fn(&v); {
		case errors.Is(err, statefile.ErrNoChange):
			return v, nil
		case err != nil:
			return zero, err
		}
		if c, ok := any(v).(changer); ok {
			c.Changed()
		} else if c, ok := any(&v).(changer); ok {
			c.Changed()
		}
		data, err := json.Marshal(v)
		if err != nil {
			return zero, fmt.Errorf("update %s: %w", d.key, err)
		}
		if rev == 0 {
			_, err = d.kv.Create(ctx, d.key, data)
		} else {
			_, err = d.kv.Update(ctx, d.key, data, rev)
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			continue // another writer won; apply the change to its revision
		}
		if err != nil {
			return zero, fmt.Errorf("update %s: %w", d.key, err)
		}
		return v, nil
	}
	return zero, fmt.Errorf("update %s: lost the race %d times in a row", d.key, maxCASTries)
}

// UpdateInPlace is Update: every try starts from a document of its own.
func (d *Doc[T]) UpdateInPlace(fn func(*T) error) (T, error) { return d.Update(fn) }

// Submit is Update, done before it returns; after is then called with its
// outcome. (A file batches such changes; a KV entry has no batch to join.)
func (d *Doc[T]) Submit(fn func(*T) error, after func(error)) {
	_, err := d.Update(fn)
	if after != nil {
		after(err)
	}
}

// Flush returns at once: Submit has stored every change before returning.
func (d *Doc[T]) Flush() {}
