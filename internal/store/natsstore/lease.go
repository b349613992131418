package natsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// markerTTL is how long the server keeps the marker that says a lease
// expired or was released, so that watchers and the next Acquire see it;
// after it the key is simply absent.
const markerTTL = time.Minute

// Leases is a team's bucket of leases (agentteam_TEAM_leases): KV entries
// each stored with a time to live, kept alive by their holder, gone once it
// stops (its process killed, its host cut off). The owner lock of a team
// and the heartbeat of a worker are leases. The bucket is apart from the
// registry's because entries that expire need a bucket made for them
// (LimitMarkerTTL, nats-server ≥ 2.11). It is safe for concurrent use.
type Leases struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	bucket string
	stream string
}

// LeaseBucketName is the name of team's lease bucket.
func LeaseBucketName(team string) string { return "agentteam_" + team + "_leases" }

// ErrHeld is the error of an Acquire whose key another holder keeps alive:
// errors.As gives its *HeldError, with the holder's value.
var ErrHeld = errors.New("held by another")

// ErrLost is the error of a lease its holder no longer holds: it expired
// before a refresh reached the server, or someone else wrote its key.
var ErrLost = errors.New("lease lost")

// HeldError says which value holds a key an Acquire wanted.
type HeldError struct {
	Key   string
	Value []byte
}

func (e *HeldError) Error() string { return fmt.Sprintf("lease %s is held by another", e.Key) }

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// OpenLeases opens team's lease bucket on nc, creating it if it is not
// there. Replicas(n) keeps n copies (see OpenMailbox). nc stays the
// caller's to close.
func OpenLeases(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Leases, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open the leases of %s: %w", team, err)
	}
	bucket := LeaseBucketName(team)
	stream := "KV_" + bucket
	opts, existing, err := keepReplicas(ctx, js, stream, opts)
	if err != nil {
		return nil, fmt.Errorf("open the leases of %s: %w", team, err)
	}
	n := replicasOf(opts)
	if existing == nil || !plain(existing.CachedInfo().Config) || max(existing.CachedInfo().Config.Replicas, 1) != max(n, 1) {
		_, err = retried(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
			return openKV(ctx, js, existing == nil, jetstream.KeyValueConfig{
				Bucket:         bucket,
				History:        1,
				Storage:        jetstream.FileStorage,
				Replicas:       n,
				LimitMarkerTTL: markerTTL,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("open the leases of %s: bucket: %w", team, replicaSentence(n, err))
		}
	}
	return &Leases{nc: nc, js: js, bucket: bucket, stream: stream}, nil
}

// subject is key's subject in the bucket.
func (ls *Leases) subject(key string) string { return "$KV." + ls.bucket + "." + key }

// checkKey refuses a key that is not dot-separated tokens of letters,
// digits, '-' and '_' ("owner", "workers.w1").
func checkKey(key string) error {
	for _, tok := range strings.Split(key, ".") {
		if err := checkToken("lease key", tok); err != nil {
			return err
		}
	}
	return nil
}

// checkTTL refuses a time to live the server cannot keep: it counts whole
// seconds, at least one.
func checkTTL(ttl time.Duration) error {
	if ttl < time.Second || ttl%time.Second != 0 {
		return fmt.Errorf("a lease's time to live is whole seconds, at least 1, not %v", ttl)
	}
	return nil
}

// last is key's current value and revision, read from the bucket's leader;
// live is false when it is absent, expired or released (rev is then the
// marker's revision, 0 for none).
func (ls *Leases) last(ctx context.Context, key string) (value []byte, rev uint64, live bool, err error) {
	m, found, err := lastFromLeader(ctx, ls.nc, ls.stream, ls.subject(key))
	if err != nil || !found {
		return nil, 0, false, err
	}
	// A delete or purge carries KV-Operation; an expiry's marker carries
	// Nats-Marker-Reason.
	if bytes.Contains(m.Header, []byte("KV-Operation")) || bytes.Contains(m.Header, []byte(jetstream.MarkerReasonHeader)) {
		return nil, m.Seq, false, nil
	}
	return m.Data, m.Seq, true, nil
}

// Get returns key's value while its lease is alive; found is false once it
// expired or was released.
func (ls *Leases) Get(ctx context.Context, key string) (value []byte, found bool, err error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	v, _, live, err := ls.last(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("read lease %s: %w", key, err)
	}
	return v, live, nil
}

// put stores value as key with ttl if key's revision is still rev (0: key
// absent), and returns the new revision. Each write carries an id of its
// own, sent again (hedged) while the cluster does not answer within
// attempt, so a write stored whose answer was lost or late is ours, not
// a lost race.
func (ls *Leases) put(ctx context.Context, key string, value []byte, ttl time.Duration, rev uint64, attempt time.Duration) (uint64, error) {
	id, err := newID()
	if err != nil {
		return 0, err
	}
	subj := ls.subject(key)
	return publishHedged(ctx, ls.js, func() *nats.Msg { return &nats.Msg{Subject: subj, Data: value} }, id, attempt,
		func(ctx context.Context) (uint64, bool) { return ownLast(ctx, ls.nc, ls.stream, subj, id) },
		jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(ttl))
}

func newID() (string, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	return hex.EncodeToString(id), nil
}

// Acquire takes key for the caller alone, with value, if no one holds it
// (it is absent, expired or released): the owner lock. While someone else
// holds it the error is a *HeldError with their value (errors.Is ErrHeld).
// The lease is then kept alive every ttl/4 by a goroutine of its own until
// Release, or until it is lost (Lost is closed). ttl is whole seconds.
func (ls *Leases) Acquire(ctx context.Context, key string, value []byte, ttl time.Duration) (*Lease, error) {
	return ls.AcquireFenced(ctx, key, value, ttl, ttl)
}

// AcquireFenced is Acquire whose lease counts as lost once fence (at most
// ttl) has passed since the last refresh the server confirmed: a holder
// cut off from the server knows it before its key expires there, and so
// before anyone else may take what the lease guards.
func (ls *Leases) AcquireFenced(ctx context.Context, key string, value []byte, ttl, fence time.Duration) (*Lease, error) {
	if fence <= 0 || fence > ttl {
		return nil, fmt.Errorf("a lease's fence is over 0 and at most its time to live %v, not %v", ttl, fence)
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	for range maxCASTries {
		v, rev, live, err := ls.last(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("acquire %s: %w", key, err)
		}
		if live {
			return nil, &HeldError{Key: key, Value: v}
		}
		start := time.Now()
		nrev, err := ls.put(ctx, key, value, ttl, rev, attemptTimeout)
		if wrongLastSeq(err) {
			continue // someone wrote it meanwhile: look again
		}
		if err != nil {
			return nil, fmt.Errorf("acquire %s: %w", key, err)
		}
		return ls.hold(key, value, ttl, fence, nrev, start), nil
	}
	return nil, fmt.Errorf("acquire %s: lost the race %d times in a row", key, maxCASTries)
}

// Keep writes value as key whoever held it, and keeps it alive as Acquire
// does: a key of the caller's own (a worker's heartbeat, workers.ID) that
// no one else writes. A later write by someone else loses the lease.
func (ls *Leases) Keep(ctx context.Context, key string, value []byte, ttl time.Duration) (*Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	for range maxCASTries {
		_, rev, _, err := ls.last(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("keep %s: %w", key, err)
		}
		start := time.Now()
		nrev, err := ls.put(ctx, key, value, ttl, rev, attemptTimeout)
		if wrongLastSeq(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("keep %s: %w", key, err)
		}
		return ls.hold(key, value, ttl, ttl, nrev, start), nil
	}
	return nil, fmt.Errorf("keep %s: lost the race %d times in a row", key, maxCASTries)
}

// Lease is a key held by this process. Its goroutine refreshes it every
// fence/4 by compare-and-set on its revision; Release ends it.
type Lease struct {
	ls    *Leases
	key   string
	ttl   time.Duration
	fence time.Duration // lost once no refresh is confirmed for this long

	mu    sync.Mutex
	value []byte
	rev   uint64
	err   error // why it was lost

	longest time.Duration // the longest wait for a refresh yet (LongestWait)
	sentOK  time.Time     // the sending of the last refresh the server confirmed (Held)

	lost chan struct{} // closed once lost
	stop chan struct{} // closed by Release
	done chan struct{} // closed when the goroutine has ended
	once sync.Once
}

// hold starts keeping key alive from revision rev, written at start.
func (ls *Leases) hold(key string, value []byte, ttl, fence time.Duration, rev uint64, start time.Time) *Lease {
	l := &Lease{ls: ls, key: key, ttl: ttl, fence: fence, value: value, rev: rev, sentOK: start,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.beat(start)
	return l
}

// Key is the lease's key.
func (l *Lease) Key() string { return l.key }

// Lost is closed once the lease is lost (Err says why); never by Release.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err is why the lease was lost (it wraps ErrLost), nil while it is held.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// LongestWait is the longest time yet from a confirmed refresh's sending
// to the next one's confirmation: the lease is lost once a wait reaches
// its fence.
func (l *Lease) LongestWait() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.longest
}

// Held reports whether the lease is still this holder's now, judged here
// without asking the server: not lost, and its last confirmed refresh sent
// less than its fence ago. Each refresh is a compare-and-set on the
// holder's revision, so the key was the holder's from its acquisition to
// that refresh and stays so for the TTL after it: no one else can have
// taken it before now. A write made before a true Held is thus ordered
// before any later holder's.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err == nil && time.Since(l.sentOK) < l.fence
}

// SetValue changes the value the next refresh writes (a worker's free
// slots).
func (l *Lease) SetValue(v []byte) {
	l.mu.Lock()
	l.value = bytes.Clone(v)
	l.mu.Unlock()
}

// beat refreshes the lease every fence/4 (ttl/4 unless AcquireFenced says
// less), counted from the last refresh's sending, until Release or its
// loss. The lease counts as lost once its fence has passed since the last
// refresh that the server confirmed was sent (the entry may have expired
// there), or at once when its revision is no longer the last (another
// wrote the key, or it expired and was taken). A process whose work takes
// its CPU answers late: each try waits for its answer half the time a
// refresh has left, not the store's usual attemptTimeout, and a write
// sent again whose first try was stored is its own (put).
func (l *Lease) beat(lastOK time.Time) {
	defer close(l.done)
	every := l.fence / 4
	attempt := max(attemptTimeout, (l.fence-every)/2)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		deadline := lastOK.Add(l.fence)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		go func() { // Release cuts a refresh short
			select {
			case <-l.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		l.mu.Lock()
		value, rev := l.value, l.rev
		l.mu.Unlock()
		sent := time.Now()
		nrev, err := l.ls.put(ctx, l.key, value, l.ttl, rev, attempt)
		cancel()
		switch {
		case err == nil:
			l.mu.Lock()
			l.rev = nrev
			l.longest = max(l.longest, time.Since(lastOK))
			l.sentOK = sent
			l.mu.Unlock()
			lastOK = sent
		case wrongLastSeq(err):
			l.lose(fmt.Errorf("%w: %s was written by another or expired", ErrLost, l.key))
			return
		default:
			select {
			case <-l.stop:
				return
			default:
			}
			if !time.Now().Before(deadline) {
				l.lose(fmt.Errorf("%w: %s not refreshed within %v: %v", ErrLost, l.key, l.fence, err))
				return
			}
		}
		// The next beat every after this one was sent (at once if that
		// is past), or every/3 after a failed one.
		next := time.Until(sent.Add(every))
		if err != nil {
			next = every / 3
		}
		t.Reset(max(next, 0))
	}
}

// lose records why the lease is lost and closes Lost.
func (l *Lease) lose(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
	close(l.lost)
}

// Release stops refreshing the lease and removes its key if it still holds
// it (a purge on its revision, leaving a marker watchers see as gone). It
// waits for the refreshing goroutine to end. Calling it again does nothing.
func (l *Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if l.Err() != nil {
			return // not ours any more: nothing to remove
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		err = l.ls.remove(ctx, l.key, rev)
	})
	return err
}

// remove purges key if its revision is still rev, leaving a marker that
// lives markerTTL.
func (ls *Leases) remove(ctx context.Context, key string, rev uint64) error {
	id, err := newID()
	if err != nil {
		return err
	}
	m := nats.NewMsg(ls.subject(key))
	m.Header.Set("KV-Operation", "PURGE")
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	_, err = retried(ctx, func(ctx context.Context) (*jetstream.PubAck, error) {
		return ls.js.PublishMsg(ctx, m, jetstream.WithMsgID(id),
			jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(markerTTL))
	})
	if wrongLastSeq(err) {
		return nil // someone else's now, or expired: nothing of ours to remove
	}
	if err != nil {
		return fmt.Errorf("release %s: %w", key, err)
	}
	return nil
}

// LeaseChange is one change a Watch reports: a key written (Value), or
// gone (expired, released or deleted).
type LeaseChange struct {
	Key      string
	Value    []byte
	Revision uint64
	Gone     bool

	current bool // watch's mark: the current values are all given
}

// Watch reports the changes of the keys matching filter (a key, or with
// NATS wildcards: "workers.>"), first the current value of each (gone
// ones included while their marker lives), then every change. The channel
// is closed once ctx ends; the watch's goroutine ends with it. An expiry
// reaches a watch about the TTL after the last refresh; a watch whose node
// is lost lags until its consumer is made again on another (its client
// misses the heartbeats: seen up to 6 s more, TestClusterWatchOutlivesTheLossOfItsNode).
func (ls *Leases) Watch(ctx context.Context, filter string) (<-chan LeaseChange, error) {
	return ls.watch(ctx, filter, false)
}

// watch is Watch; with markCurrent, a change with current set (and no
// key) follows the current values, once they are all given.
func (ls *Leases) watch(ctx context.Context, filter string, markCurrent bool) (<-chan LeaseChange, error) {
	kv, err := retried(ctx, func(ctx context.Context) (jetstream.KeyValue, error) { return ls.js.KeyValue(ctx, ls.bucket) })
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", filter, err)
	}
	w, err := kv.Watch(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", filter, err)
	}
	out := make(chan LeaseChange, 64)
	go func() {
		defer close(out)
		marked := !markCurrent
		updates := w.Updates()
		for {
			select {
			case <-ctx.Done():
				_ = w.Stop()
				for range updates { // the watcher blocks on a full channel: drain until it closes
				}
				return
			case e, ok := <-updates:
				if !ok {
					<-ctx.Done()
					return
				}
				if e == nil { // the current values are all given
					if !marked {
						marked = true
						select {
						case out <- LeaseChange{current: true}:
						case <-ctx.Done():
						}
					}
					continue
				}
				c := LeaseChange{Key: e.Key(), Value: e.Value(), Revision: e.Revision(),
					Gone: e.Operation() != jetstream.KeyValuePut}
				select {
				case out <- c:
				case <-ctx.Done():
				}
			}
		}
	}()
	return out, nil
}

// SessionStreamName is the name of team's session stream.
func SessionStreamName(team string) string { return "agentteam_" + team + "_sessions" }
