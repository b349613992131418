package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/statefile"
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
	// fromLeader: the bucket has copies, so reads go to its leader.
	fromLeader bool
	nc         *nats.Conn
	js         jetstream.JetStream
	stream     string // the bucket's stream
	// Update, Change, Submit and the rest are the batcher's: a batch is
	// one compare-and-set (again on the newer revision after a lost race),
	// bounded by opTimeout, not cut short by one of the callers sharing it.
	*batcher[T]
}

// batcher names the embedded statefile.Batcher so that the field stays
// unexported.
type batcher[T any] = statefile.Batcher[T]

// changer is a document that counts its changes.
type changer interface{ Changed() }

// BucketName is the name of team's KV bucket.
func BucketName(team string) string { return "agentteam_" + team }

// OpenDoc opens the document key of team on nc, creating the bucket if it
// is not there; a missing document is T's zero value. nc stays the
// caller's to close.
func OpenDoc[T any](ctx context.Context, nc *nats.Conn, team, key string, opts ...MailboxOption) (*Doc[T], error) {
	return OpenDocWith(ctx, nc, team, key, func() T { var v T; return v }, opts...)
}

// OpenDocWith is OpenDoc whose missing document is empty(). Replicas(n)
// keeps n copies of the bucket (an existing one is changed to n); without
// it a new bucket has one copy and an existing one keeps its count. With
// copies, every read goes to the bucket's leader.
func OpenDocWith[T any](ctx context.Context, nc *nats.Conn, team, key string, empty func() T, opts ...MailboxOption) (*Doc[T], error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	if err := checkToken("document", key); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: %w", key, team, err)
	}
	stream := "KV_" + BucketName(team)
	opts, existing, err := keepReplicas(ctx, js, stream, opts)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: %w", key, team, err)
	}
	n := replicasOf(opts)
	kv, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		// Opened as it is when it has the copies asked for (see openStream).
		if existing != nil && plain(existing.CachedInfo().Config) && max(existing.CachedInfo().Config.Replicas, 1) == max(n, 1) {
			return js.KeyValue(ctx, BucketName(team))
		}
		return openKV(ctx, js, existing == nil, jetstream.KeyValueConfig{
			Bucket:   BucketName(team),
			History:  1,
			Storage:  jetstream.FileStorage,
			Replicas: n,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: bucket: %w", key, team, replicaSentence(n, err))
	}
	d := &Doc[T]{kv: kv, key: key, empty: empty, fromLeader: n > 1, nc: nc, js: js, stream: stream}
	d.batcher = statefile.NewBatcher(key, empty, cloneOf[T], countChange[T], kvStorage[T]{d})
	return d, nil
}

// get returns the document and its revision; a missing one is empty() at
// revision 0.
func (d *Doc[T]) get(ctx context.Context) (T, uint64, error) {
	v := d.empty()
	if d.fromLeader {
		return d.getFromLeader(ctx, v)
	}
	e, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValueEntry, error) { return d.kv.Get(ctx, d.key) })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		// Never stored, or deleted: a compare-and-set then expects the
		// revision of the deletion's marker, which the leader says.
		return d.getFromLeader(ctx, v)
	}
	if err != nil {
		return v, 0, fmt.Errorf("read %s: %w", d.key, err)
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return v, 0, fmt.Errorf("read %s: revision %d is not a document: %w", d.key, e.Revision(), err)
	}
	return v, e.Revision(), nil
}

// getFromLeader is get asking the bucket's leader.
func (d *Doc[T]) getFromLeader(ctx context.Context, v T) (T, uint64, error) {
	m, found, err := lastFromLeader(ctx, d.nc, d.stream, "$KV."+d.kv.Bucket()+"."+d.key)
	if err != nil {
		return v, 0, fmt.Errorf("read %s: %w", d.key, err)
	}
	if !found {
		return v, 0, nil
	}
	if bytes.Contains(m.Header, []byte("KV-Operation")) { // deleted or purged: the next change follows the marker
		return v, m.Seq, nil
	}
	if err := json.Unmarshal(m.Data, &v); err != nil {
		return v, 0, fmt.Errorf("read %s: revision %d is not a document: %w", d.key, m.Seq, err)
	}
	return v, m.Seq, nil
}

// cas stores data as the document if its revision is still rev, sent
// again while the cluster gives no answer (a leader lost mid-write) and
// checked as its own when a resend is refused (casPublish).
func (d *Doc[T]) cas(ctx context.Context, data []byte, rev uint64) error {
	subj := "$KV." + d.kv.Bucket() + "." + d.key
	_, err := casPublish(ctx, d.js, d.nc, d.stream, func() *nats.Msg { return &nats.Msg{Subject: subj, Data: data} }, rev)
	return err
}

// wrongLastSeq is the server's answer to a compare-and-set that lost.
func wrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Read returns the document; a missing one is the zero value.
func (d *Doc[T]) Read(ctx context.Context) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	v, _, err := d.get(ctx)
	return v, err
}

// kvStorage is the KV entry's step of a batch: read, change, compare-and-set,
// and after a lost race the same again on the newer revision. Each try has
// opTimeout of its own: a lost race is another writer's progress, not a
// server gone.
type kvStorage[T any] struct{ d *Doc[T] }

func (s kvStorage[T]) Commit(ctx context.Context, change func(T) (T, bool)) (T, error) {
	for range maxCASTries {
		v, lost, err := s.d.try(ctx, change)
		if !lost {
			return v, err
		}
	}
	return s.d.empty(), fmt.Errorf("update %s: lost the race %d times in a row", s.d.key, maxCASTries)
}

// try is one read, change and compare-and-set; lost says another revision
// was stored meanwhile.
func (d *Doc[T]) try(ctx context.Context, change func(T) (T, bool)) (v T, lost bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	v, rev, err := d.get(ctx)
	if err != nil {
		return v, false, err
	}
	v, changed := change(v)
	if !changed {
		return v, false, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v, false, fmt.Errorf("update %s: %w", d.key, err)
	}
	if err := d.cas(ctx, data, rev); wrongLastSeq(err) {
		return v, true, nil
	} else if err != nil {
		return v, false, fmt.Errorf("update %s: %w", d.key, err)
	}
	return v, false, nil
}

// countChange counts a stored change when T has a Changed method (the
// registry's and the board's version and time).
func countChange[T any](v *T) {
	if c, ok := any(*v).(changer); ok {
		c.Changed()
	} else if c, ok := any(v).(changer); ok {
		c.Changed()
	}
}

// cloneOf is a copy of v of its own for a caller: T's Clone when it has
// one (the registry, the board), else a JSON round trip (a document is JSON).
func cloneOf[T any](v T) T {
	if c, ok := any(v).(interface{ Clone() T }); ok {
		return c.Clone()
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var w T
	if err := json.Unmarshal(data, &w); err != nil {
		return v
	}
	return w
}
