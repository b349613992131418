package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxCASTries bounds how often Update reads again after losing a race; it
// is only reached by a document changed without pause by many writers.
const maxCASTries = 1000

// Doc is one JSON document (the registry, the task board) in the team's KV
// bucket, changed only by compare-and-set on its revision: an Update that
// raced another reads the new revision and applies its change again.
type Doc[T any] struct {
	kv  jetstream.KeyValue
	key string
}

// BucketName is the name of team's KV bucket.
func BucketName(team string) string { return "agentteam_" + team }

// OpenDoc opens the document key of team on nc, creating the bucket if it
// is not there. nc stays the caller's to close.
func OpenDoc[T any](ctx context.Context, nc *nats.Conn, team, key string) (*Doc[T], error) {
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
	return &Doc[T]{kv: kv, key: key}, nil
}

// get returns the document and its revision; a missing one is the zero
// value at revision 0.
func (d *Doc[T]) get(ctx context.Context) (T, uint64, error) {
	var v T
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
		if err := fn(&v); err != nil {
			return zero, err
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
