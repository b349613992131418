package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// Entries is a document kept as many small KV entries (the registry: one
// per teammate and one for the team), in a bucket of its own, so that a
// change costs what it changes and not what the whole document weighs
// (the registry as one entry was read and rewritten whole at
// every status change, O(N) each, and every process's writes raced for
// it). A change of one entry is a compare-and-set on that entry's
// revision; a change of several is one atomic batch in which each entry
// expects its revision, stored whole or not at all.
//
// Reads come from a copy in memory that a watch of the bucket keeps in
// step. Sync makes it fresh: it asks the server for the bucket's newest
// revision only (one small request, not the document) and waits until the
// watch has brought that much; what was stored before Sync began is then
// in the copy, as a read of the file would see it.
type Entries struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	kv         jetstream.KeyValue
	stream     string
	fromLeader bool // the bucket has copies: its newest revision is asked of its leader
	decode     func(key string, data []byte) any

	mu      sync.Mutex
	entries map[string]entry
	order   []string      // the keys in the order the copy first held them (View's order)
	seen    uint64        // the newest revision the watch delivered (it delivers in order)
	moved   chan struct{} // closed (and replaced) when seen moves
	gone    error         // set when the watch ended: Sync fails from then on

	watcher jetstream.KeyWatcher
	stop    context.CancelFunc
	ended   chan struct{} // closed when the watching goroutine returns
}

// entry is one key's value as decoded, and its revision (a deleted key
// keeps its revision, so that it can be made again by compare-and-set).
type entry struct {
	v       any
	rev     uint64
	stored  time.Time
	deleted bool
}

// openBucket opens the bucket, made if missing with atomic batches
// allowed; n is its copies.
func openBucket(ctx context.Context, js jetstream.JetStream, bucket string, opts []MailboxOption) (jetstream.KeyValue, int, error) {
	stream := "KV_" + bucket
	opts, existing, err := keepReplicas(ctx, js, stream, opts)
	if err != nil {
		return nil, 0, err
	}
	n := replicasOf(opts)
	// Opened as it is when it has the copies asked for and takes batches.
	as := existing != nil && plain(existing.CachedInfo().Config) && max(existing.CachedInfo().Config.Replicas, 1) == max(n, 1)
	kv, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		if as {
			return js.KeyValue(ctx, bucket)
		}
		return openKV(ctx, js, existing == nil, jetstream.KeyValueConfig{
			Bucket: bucket, History: 1, Storage: jetstream.FileStorage, Replicas: n,
		})
	})
	if err != nil {
		return nil, n, fmt.Errorf("bucket: %w", replicaSentence(n, err))
	}
	if !as || !existing.CachedInfo().Config.AllowAtomicPublish {
		// Credentials that may make a bucket but not change it (a worker
		// started before its lead) leave it without batches: the lead's
		// open allows them, before anyone writes entries in a batch.
		if err := allowAtomic(ctx, js, stream); err != nil && !errors.Is(err, natsconn.ErrRefused) {
			return nil, n, err
		}
	}
	return kv, n, nil
}

// openKV makes a bucket there is none of (fresh), never updating one
// made meanwhile, else changes it to cfg (see openStream).
func openKV(ctx context.Context, js jetstream.JetStream, fresh bool, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if fresh {
		kv, err := js.CreateKeyValue(ctx, cfg)
		if !errors.Is(err, jetstream.ErrBucketExists) {
			return kv, err
		}
	}
	ctx, stop := natsconn.WatchRefusal(ctx, js.Conn(), "$JS.API.STREAM.UPDATE.KV_"+cfg.Bucket)
	defer stop()
	kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
	if cause := natsconn.RefusedCause(ctx, err); err != nil && cause != err {
		return nil, notChanged("KV_"+cfg.Bucket, cause)
	}
	return kv, err
}

// EntriesBucket is the name of team's bucket named name.
func EntriesBucket(team, name string) string { return "agentteam_" + team + "_" + name }

// OpenEntries opens team's bucket named name (made if missing, with atomic
// batches allowed) and starts watching it; decode turns an entry's data
// into the value the copy keeps (it must not fail: a broken entry is a
// value that says so). Close stops the watch; nc stays the caller's.
func OpenEntries(ctx context.Context, nc *nats.Conn, team, name string, decode func(key string, data []byte) any, opts ...MailboxOption) (*Entries, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	if err := checkToken("bucket", name); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: %w", name, team, err)
	}
	bucket := EntriesBucket(team, name)
	stream := "KV_" + bucket
	kv, n, err := openBucket(ctx, js, bucket, opts)
	for errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) && ctx.Err() == nil {
		// Another process made the bucket between our look and our create
		// (and allowed batches, so its config differs): open it as it is.
		kv, n, err = openBucket(ctx, js, bucket, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s of %s: %w", name, team, err)
	}
	e := &Entries{nc: nc, js: js, kv: kv, stream: stream, fromLeader: n > 1, decode: decode,
		entries: map[string]entry{}, moved: make(chan struct{}), ended: make(chan struct{})}
	wctx, stop := context.WithCancel(context.Background())
	w, err := kv.WatchAll(wctx)
	if err != nil {
		stop()
		return nil, fmt.Errorf("open %s of %s: watch: %w", name, team, err)
	}
	e.watcher, e.stop = w, stop
	go e.watch(w.Updates())
	return e, nil
}

// allowAtomic lets the bucket's stream take atomic batches (a change of
// several entries), unless it already does.
func allowAtomic(ctx context.Context, js jetstream.JetStream, stream string) error {
	// Made a moment ago, here or by another process.
	st, err := knownSoon(ctx, func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, stream) })
	if err != nil {
		return fmt.Errorf("look up stream %s: %w", stream, err)
	}
	cfg := st.CachedInfo().Config
	if cfg.AllowAtomicPublish {
		return nil
	}
	cfg.AllowAtomicPublish = true
	if _, err := retried(ctx, func(ctx context.Context) (jetstream.Stream, error) { return updateStream(ctx, js, cfg) }); err != nil {
		return fmt.Errorf("allow atomic batches on %s: %w", stream, err)
	}
	return nil
}

// watch applies the watch's entries to the copy until the watch ends.
func (e *Entries) watch(updates <-chan jetstream.KeyValueEntry) {
	defer close(e.ended)
	for u := range updates {
		if u == nil {
			continue // the end of the initial values: the revisions say the rest
		}
		e.mu.Lock()
		e.apply(u.Key(), u.Value(), u.Revision(), u.Created(), u.Operation() != jetstream.KeyValuePut)
		if u.Revision() > e.seen {
			e.seen = u.Revision()
			close(e.moved)
			e.moved = make(chan struct{})
		}
		e.mu.Unlock()
	}
	e.mu.Lock()
	e.gone = errors.New("the watch of the bucket ended")
	close(e.moved)
	e.moved = make(chan struct{})
	e.mu.Unlock()
}

// apply puts one stored revision of key in the copy, unless the copy
// already holds a newer one (its own write, put there at once). The
// caller holds e.mu.
func (e *Entries) apply(key string, data []byte, rev uint64, stored time.Time, deleted bool) {
	if old, ok := e.entries[key]; ok && old.rev >= rev {
		return
	}
	en := entry{rev: rev, stored: stored, deleted: deleted}
	if !deleted {
		en.v = e.decode(key, data)
	}
	if _, ok := e.entries[key]; !ok {
		e.order = append(e.order, key)
	}
	e.entries[key] = en
}

// Close stops the watch and waits for its goroutine.
func (e *Entries) Close() {
	_ = e.watcher.Stop()
	e.stop()
	<-e.ended
}

// Sync returns once the copy holds every entry stored before it was
// called: it asks for the bucket's newest revision and waits for the watch
// to reach it.
func (e *Entries) Sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	newest, err := e.newest(ctx)
	if err != nil {
		return fmt.Errorf("read %s: %w", e.kv.Bucket(), err)
	}
	lag := time.NewTimer(watchLag)
	defer lag.Stop()
	for {
		e.mu.Lock()
		seen, moved, gone := e.seen, e.moved, e.gone
		e.mu.Unlock()
		if seen >= newest {
			return nil
		}
		if gone != nil {
			return fmt.Errorf("read %s: %w", e.kv.Bucket(), gone)
		}
		select {
		case <-moved:
		case <-lag.C:
			// The watch lags: its consumer was on a node that went away
			// (it is made again only after missed heartbeats, over 10 s),
			// or the process is starved. Read the rest from the stream.
			if err := e.readOn(ctx, seen, newest); err != nil {
				return fmt.Errorf("read %s: the watch did not bring revision %d (it is at %d), nor could it be read: %w", e.kv.Bucket(), newest, seen, err)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("read %s: the watch did not bring revision %d within %s (it is at %d)", e.kv.Bucket(), newest, opTimeout, seen)
		}
	}
}

// watchLag is how long Sync waits for the watch before it reads the
// revisions the watch has not brought from the stream's leader itself.
const watchLag = 2 * time.Second

// readOn puts in the copy the revisions after seen up to newest, read one
// by one from the stream's leader (one replaced since by a newer revision
// is gone from the stream: that one is read instead), and moves the copy's
// position there; the watch, once back, brings them again and changes
// nothing (apply keeps the newer revision).
func (e *Entries) readOn(ctx context.Context, seen, newest uint64) error {
	prefix := e.subject("")
	for seq := seen + 1; seq <= newest; seq++ {
		m, found, err := seqFromLeader(ctx, e.nc, e.stream, seq)
		if err != nil {
			return err
		}
		if !found || !strings.HasPrefix(m.Subject, prefix) {
			continue
		}
		e.mu.Lock()
		e.apply(strings.TrimPrefix(m.Subject, prefix), m.Data, m.Seq, m.Time, containsKVOp(m.Header))
		e.mu.Unlock()
	}
	e.mu.Lock()
	if newest > e.seen {
		e.seen = newest
		close(e.moved)
		e.moved = make(chan struct{})
	}
	e.mu.Unlock()
	return nil
}

// newest is the bucket's newest revision (0: empty): the stream's last
// message, which the server finds without looking at the others.
func (e *Entries) newest(ctx context.Context) (uint64, error) {
	if !e.fromLeader {
		// A direct get, answered by the stream without the API's JSON.
		m, err := retried(ctx, func(ctx context.Context) (*nats.Msg, error) {
			return e.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+e.stream, []byte(`{"last_by_subj":">"}`))
		})
		if err != nil {
			return 0, err
		}
		switch m.Header.Get("Status") {
		case "":
		case "404":
			return 0, nil
		default:
			return 0, fmt.Errorf("the newest revision: the server answered %s %s", m.Header.Get("Status"), m.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the newest revision: the server's answer has no sequence: %w", err)
		}
		return seq, nil
	}
	m, found, err := lastFromLeader(ctx, e.nc, e.stream, ">")
	if err != nil || !found {
		return 0, err
	}
	return m.Seq, nil
}

// View calls fn with every entry the copy holds (deleted ones left out),
// in the order the copy first held them (so the registry's teammates come
// about in the order they were made), under the copy's lock: fn must not
// change a value nor call e. stored is when the newest revision was stored.
func (e *Entries) View(fn func(key string, v any, rev uint64)) (newest uint64, stored time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.order {
		en := e.entries[k]
		if en.rev > newest {
			newest, stored = en.rev, en.stored
		}
		if !en.deleted {
			fn(k, en.v, en.rev)
		}
	}
	return newest, stored
}

// Get is key's value and revision in the copy (rev 0: never stored; ok
// false: none now).
func (e *Entries) Get(key string) (v any, rev uint64, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	en, found := e.entries[key]
	return en.v, en.rev, found && !en.deleted
}

// Fetch reads key from the server into the copy and returns it as Get does.
func (e *Entries) Fetch(ctx context.Context, key string) (v any, rev uint64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	subj := e.subject(key)
	var data []byte
	var stored time.Time
	var deleted, found bool
	if e.fromLeader {
		m, f, err := lastFromLeader(ctx, e.nc, e.stream, subj)
		if err != nil {
			return nil, 0, false, fmt.Errorf("read %s: %w", key, err)
		}
		found, rev, data, stored = f, m.Seq, m.Data, time.Now()
		deleted = f && len(m.Header) > 0 && containsKVOp(m.Header)
	} else {
		en, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValueEntry, error) { return e.kv.Get(ctx, key) })
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			// Deleted or never stored: the copy keeps what it knows of it.
		case err != nil:
			return nil, 0, false, fmt.Errorf("read %s: %w", key, err)
		default:
			found, rev, data, stored = true, en.Revision(), en.Value(), en.Created()
		}
	}
	e.mu.Lock()
	if found {
		e.apply(key, data, rev, stored, deleted)
	}
	e.mu.Unlock()
	v, rev, ok = e.Get(key)
	return v, rev, ok, nil
}

// containsKVOp reports whether a raw header block marks a delete or purge.
func containsKVOp(h []byte) bool {
	return bytes.Contains(h, []byte("KV-Operation")) || bytes.Contains(h, []byte("Nats-Marker-Reason"))
}

// Put stores data[i] as keys[i] if its revision is still revs[i] (0: it
// does not exist); nil data deletes the key. Several keys are one atomic
// batch: all stored or none. lost says some revision had moved (nothing
// was stored). It returns the newest revision stored; the copy holds what
// was stored once Put returns.
func (e *Entries) Put(ctx context.Context, keys []string, data [][]byte, revs []uint64) (rev uint64, lost bool, err error) {
	return e.put(ctx, nil, keys, data, revs)
}

// put is Put of a batch whose earlier tries, sent under the batch ids
// tried, may have been stored (none for a first send).
func (e *Entries) put(ctx context.Context, tried []string, keys []string, data [][]byte, revs []uint64) (rev uint64, lost bool, err error) {
	if len(keys) == 0 {
		return 0, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var last uint64
	if len(keys) == 1 {
		last, err = e.putOne(ctx, keys[0], data[0], revs[0])
	} else {
		last, err = e.putBatch(ctx, tried, keys, data, revs)
	}
	if err != nil {
		if wrongLastSeq(err) || errors.Is(err, jetstream.ErrKeyExists) {
			return 0, true, nil
		}
		return 0, false, fmt.Errorf("update %s: %w", e.kv.Bucket(), err)
	}
	// The batch's messages have the revisions up to last, in order.
	now := time.Now()
	e.mu.Lock()
	for i, k := range keys {
		e.apply(k, data[i], last-uint64(len(keys)-1-i), now, data[i] == nil)
	}
	e.mu.Unlock()
	return last, false, nil
}

// putOne is a compare-and-set of one key, sent again while the cluster
// gives no answer and checked as its own when a resend is refused
// (casPublish).
func (e *Entries) putOne(ctx context.Context, key string, data []byte, rev uint64) (uint64, error) {
	return casPublish(ctx, e.js, e.nc, e.stream, func() *nats.Msg { return e.msg(key, data) }, rev)
}

// subject is key's subject in the bucket's stream.
func (e *Entries) subject(key string) string { return "$KV." + e.kv.Bucket() + "." + key }

// msg is a message that stores data as key (nil: deletes it).
func (e *Entries) msg(key string, data []byte) *nats.Msg {
	m := nats.NewMsg(e.subject(key))
	m.Data = data
	if data == nil {
		m.Header.Set("KV-Operation", "DEL")
	}
	return m
}

// batchIDHeader names an atomic batch; the server stores it with each of
// the batch's messages, which is how a try whose answer was lost is found.
const batchIDHeader = "Nats-Batch-Id"

// putBatch stores an atomic batch. A batch has no Nats-Msg-Id that makes
// its resend a duplicate, so when its answer is lost (the node answering
// it gone, the 300-teammate failover run's "update …registry: context
// deadline exceeded") it looks whether one of its tries was stored
// (batchLanded) before it sends the batch again under a fresh batch id with
// the same expected revisions: at most one try can pass those.
func (e *Entries) putBatch(ctx context.Context, tried []string, keys []string, data [][]byte, revs []uint64) (uint64, error) {
	ids := append([]string(nil), tried...)
	for {
		id, err := newID()
		if err != nil {
			return 0, err
		}
		ids = append(ids, id)
		try, cancel := context.WithTimeout(ctx, attemptTimeout)
		seq, err := e.sendBatch(try, id, keys, data, revs)
		cancel()
		switch {
		case err == nil:
			return seq, nil
		case len(ids) == 1 && wrongLastSeq(err):
			return 0, err // a first try refused: another writer's, nothing of ours is stored
		case !unanswered(err) && !wrongLastSeq(err) && !incompleteBatch(err):
			return 0, err
		}
		// No answer, or a resend refused: one of the tries may be stored.
		if seq, ok := e.batchLanded(ctx, keys, ids); ok {
			return seq, nil
		}
		if ctx.Err() != nil || (wrongLastSeq(err) && !inFlight(err)) {
			return 0, err // a lost race: a revision moved, and not by us
		}
		select { // a try still being applied makes a resend wait for it
		case <-ctx.Done():
			return 0, err
		case <-time.After(inProcessWait):
		}
	}
}

// batchLanded reports whether one of the tries ids of the batch of keys
// was stored, and the revision of its last message: a batch is stored
// whole with consecutive revisions, so any of its keys whose last message
// is still the batch's says so (each is looked at, in order: the
// registry's team entry, which every whole-registry update writes, comes
// last).
func (e *Entries) batchLanded(ctx context.Context, keys []string, ids []string) (uint64, bool) {
	for i := range keys {
		if seq, ok := landed(ctx, e.nc, e.stream, e.subject(keys[i]), batchIDHeader, ids...); ok {
			return seq + uint64(len(keys)-1-i), true
		}
		if ctx.Err() != nil {
			break
		}
	}
	return 0, false
}

// incompleteBatch is the server's answer to a batch it did not get whole
// (a connection moved to another node between its messages): nothing of it
// is stored.
func incompleteBatch(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == codeIncompleteBatch
}

// inFlight is a refusal for the revision because another message on the
// subject is still being applied (it may be a try of this write).
func inFlight(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// sendBatch sends the batch once under batch id id: every message but the
// last is sent without waiting, the last commits and is answered for the
// whole batch.
func (e *Entries) sendBatch(ctx context.Context, id string, keys []string, data [][]byte, revs []uint64) (uint64, error) {
	for i, k := range keys {
		m := e.msg(k, data[i])
		m.Header.Set(batchIDHeader, id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(revs[i], 10))
		if i < len(keys)-1 {
			if err := e.nc.PublishMsg(m); err != nil {
				return 0, err
			}
			continue
		}
		m.Header.Set("Nats-Batch-Commit", "1")
		reply, err := e.nc.RequestMsgWithContext(ctx, m)
		if err != nil {
			return 0, err
		}
		var ack struct {
			Seq   uint64              `json:"seq"`
			Count int                 `json:"count"`
			Error *jetstream.APIError `json:"error"`
		}
		if err := json.Unmarshal(reply.Data, &ack); err != nil {
			return 0, fmt.Errorf("the server's answer to a batch is not JSON: %w", err)
		}
		if ack.Error != nil {
			return 0, ack.Error
		}
		if ack.Count != len(keys) {
			return 0, fmt.Errorf("the server stored %d of a batch of %d", ack.Count, len(keys))
		}
		return ack.Seq, nil
	}
	return 0, nil
}
