package natsstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
)

// A commit whose pull finds nothing yet pulls again, waiting commitPullWait
// each time, at most commitPullWaits times (see Commit).
const (
	commitPullWait  = 50 * time.Millisecond
	commitPullWaits = 10
)

// watchResignal is how long after a message's wake Watch signals again,
// for a reader that looked before the stream stored it; watchBackstop is
// how often it checks whether it may have missed one. A backstop signals
// (and its reader asks the server) only within watchNewsBackstops of one
// that had news (a message heard, a reconnect, a dropped notification, the
// start) and every watchFullBackstops: each signal of 1,000 idle teammates
// was a consumer info request, 200 a second for nothing.
const (
	watchResignal      = 200 * time.Millisecond
	watchBackstop      = 5 * time.Second
	watchNewsBackstops = 3                            // 15 s: a store delayed by a leader's election
	watchFullBackstops = int(ackWait / watchBackstop) // 30 s: a message a dead commit held is offered again
)

// afterFunc is time.AfterFunc; a test counts the timers Watch makes.
var afterFunc = time.AfterFunc

// backstopTicks gives Watch's backstop ticks and their stop, and
// backstopDone hears whether each signalled: a test drives them.
var (
	backstopTicks = func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	backstopDone = func(signalled bool) {}
)

// maxBatch bounds the messages one ReadUnread returns; the rest come in
// the next read.
const maxBatch = 1024

// pos is the Mailbox's inbox.Position: the stream sequence of the last
// message of a batch, which Commit acknowledges (and all before it).
type pos struct{ last uint64 }

// floor is name's read position: the stream sequence up to which its
// consumer has acknowledged.
func (mb *Mailbox) floor(ctx context.Context, name string) (*jetstream.ConsumerInfo, error) {
	c, info, err := mb.consumer(ctx, name)
	if err != nil {
		return nil, err
	}
	if info == nil {
		if info, err = retried(ctx, c.Info); err != nil {
			return nil, fmt.Errorf("inbox %s: read position: %w", name, err)
		}
	}
	mb.sawFloor(name, info.AckFloor.Stream)
	return info, nil
}

// sawFloor notes that name's read position is at least seq. A position
// only moves on, so the highest seen is never past the server's.
func (mb *Mailbox) sawFloor(name string, seq uint64) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if old, ok := mb.floors[name]; !ok || seq > old {
		mb.floors[name] = seq
	}
}

// ReadUnread returns the messages after name's read position, up to
// maxBatch. It changes nothing: the messages are read from the stream, not
// delivered by the consumer. Commit marks the batch read.
func (mb *Mailbox) ReadUnread(ctx context.Context, name string) (inbox.Batch, error) {
	if err := inbox.ValidateName(name); err != nil {
		return inbox.Batch{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	info, err := mb.floor(ctx, name)
	if err != nil {
		return inbox.Batch{}, err
	}
	var b inbox.Batch
	last, err := mb.scan(ctx, name, info.AckFloor.Stream+1, maxBatch, func(_ uint64, m *inbox.Message, bad *inbox.BadLine) {
		if bad != nil {
			b.Bad = append(b.Bad, *bad)
		} else {
			b.Messages = append(b.Messages, *m)
		}
	})
	if err != nil {
		return inbox.Batch{}, err
	}
	if last > 0 {
		b.Pos = pos{last: last}
	}
	return b, nil
}

// scan hands fn the messages of name's inbox from stream sequence seq on,
// at most limit of them (0: all; fewer when reading is slow), parsed or
// rejected, and returns the sequence of the last one (0: none). They are
// read from the stream, so nothing changes: many at a time by batched
// direct gets where the stream answers them, else one by one.
func (mb *Mailbox) scan(ctx context.Context, name string, seq uint64, limit int, fn func(seq uint64, m *inbox.Message, bad *inbox.BadLine)) (uint64, error) {
	hand := func(raw *jetstream.RawStreamMsg) {
		if m, bad := parse(raw); bad != nil {
			fn(raw.Sequence, nil, bad)
		} else {
			fn(raw.Sequence, &m, nil)
		}
	}
	if !mb.hasUnnamed(name) {
		last, _, err := mb.scanSubject(ctx, inboxFilter(mb.team, name), seq, limit, hand)
		return last, err
	}
	// Messages stored before senders were named are read beside the
	// others, in the stream's order, up to where the first of the two
	// reads that stopped short stopped: nothing before it is missed.
	var raws []*jetstream.RawStreamMsg
	keep := func(raw *jetstream.RawStreamMsg) { raws = append(raws, raw) }
	cut := uint64(math.MaxUint64)
	for _, subj := range []string{Subject(mb.team, name), inboxFilter(mb.team, name)} {
		last, whole, err := mb.scanSubject(ctx, subj, seq, limit, keep)
		if err != nil {
			return 0, err
		}
		if !whole {
			cut = min(cut, last)
		}
	}
	slices.SortFunc(raws, func(a, b *jetstream.RawStreamMsg) int { return cmp.Compare(a.Sequence, b.Sequence) })
	var last uint64
	for i, raw := range raws {
		if raw.Sequence > cut || limit > 0 && i == limit {
			break
		}
		hand(raw)
		last = raw.Sequence
	}
	return last, nil
}

// scanSubject is scan of the messages on subj (a subject or a filter).
func (mb *Mailbox) scanSubject(ctx context.Context, subj string, seq uint64, limit int, hand0 func(*jetstream.RawStreamMsg)) (last uint64, whole bool, err error) {
	name, _, _ := strings.Cut(strings.TrimPrefix(subj, "agentteam."+mb.team+".inbox."), ".")
	hand := func(raw *jetstream.RawStreamMsg) {
		hand0(raw)
		last, seq = raw.Sequence, raw.Sequence+1
	}
	// A batch stops growing halfway through the call's time (a cluster
	// slow after losing a node): the rest comes in the next read.
	batchEnd := time.Now().Add(opTimeout / 2)
	for n := 0; limit == 0 || n < limit; {
		if limit > 0 && last > 0 && time.Now().After(batchEnd) {
			return last, false, nil
		}
		if mb.direct {
			want := directBatch
			if limit > 0 {
				want = min(want, limit-n)
			}
			var more bool
			raws, err := retried(ctx, func(ctx context.Context) ([]*jetstream.RawStreamMsg, error) {
				raws, m, err := mb.gets.get(ctx, subj, seq, want)
				more = m
				return raws, err
			})
			if err != nil {
				return 0, false, fmt.Errorf("read inbox %s: %w", name, err)
			}
			for _, raw := range raws {
				hand(raw)
			}
			if n += len(raws); len(raws) == 0 || !more {
				return last, true, nil
			}
			continue
		}
		raw, err := retried(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return mb.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return last, true, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("read inbox %s: %w", name, err)
		}
		hand(raw)
		n++
	}
	return last, false, nil
}

// ReadAll returns every message and bad line of name's inbox, read or not.
func (mb *Mailbox) ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error) {
	if err := inbox.ValidateName(name); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var msgs []inbox.Message
	var bad []inbox.BadLine
	_, err := mb.scan(ctx, name, 1, 0, func(_ uint64, m *inbox.Message, b *inbox.BadLine) {
		if b != nil {
			bad = append(bad, *b)
		} else {
			msgs = append(msgs, *m)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return msgs, bad, nil
}

// Stats counts name's messages: valid ones, those after the read
// position, and bad ones. It reads the whole inbox.
func (mb *Mailbox) Stats(ctx context.Context, name string) (inbox.Stats, error) {
	if err := inbox.ValidateName(name); err != nil {
		return inbox.Stats{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	info, err := mb.floor(ctx, name)
	if err != nil {
		return inbox.Stats{}, err
	}
	floor := info.AckFloor.Stream
	var st inbox.Stats
	_, err = mb.scan(ctx, name, 1, 0, func(seq uint64, _ *inbox.Message, b *inbox.BadLine) {
		switch {
		case b != nil:
			st.Bad++
		default:
			st.Total++
			if seq > floor {
				st.Unread++
			}
		}
	})
	return st, err
}

// parse reads one stored message as the file store reads a line; Offset of
// a bad one is its stream sequence.
func parse(raw *jetstream.RawStreamMsg) (inbox.Message, *inbox.BadLine) {
	line := bytes.TrimSuffix(raw.Data, []byte{'\n'})
	bad := func(reason string) *inbox.BadLine {
		shown := line
		if len(shown) > 512 {
			shown = shown[:512]
		}
		return &inbox.BadLine{Offset: int64(raw.Sequence), Line: string(shown), Reason: reason}
	}
	var m inbox.Message
	if err := json.Unmarshal(line, &m); err != nil {
		return m, bad("not JSON: " + err.Error())
	}
	if m.ID == "" || m.Type == "" {
		return m, bad("missing id or type")
	}
	if sender := senderOf(raw.Subject); sender != "" && m.From != sender {
		// The server stored it as sent by sender: the credentials that sent
		// it may send as sender and perhaps not as m.From.
		return m, bad(fmt.Sprintf("forged sender: it says it is from %q but was sent as %q; not delivered", m.From, sender))
	}
	return m, nil
}

// senderOf is the sender named in an inbox message's subject
// (SentSubject), "" for one stored before senders were named.
func senderOf(subject string) string {
	// agentteam.TEAM.inbox.TO.FROM
	if strings.Count(subject, ".") != 4 {
		return ""
	}
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// Commit marks b as read: name's consumer acknowledges the last message of
// b, and with it all before, and Commit returns once the server confirmed
// it. The position never moves back: a batch at or below it is a no-op.
//
// An acknowledgement needs a delivery, so Commit has the consumer deliver
// up to b's last message; any delivered beyond it are refused (Nak) and
// come again at the next commit. If a commit elsewhere died holding b's
// last message, it is held until ackWait passes; Commit then says so and
// the batch is read again later.
func (mb *Mailbox) Commit(ctx context.Context, name string, b inbox.Batch) error {
	p, ok := b.Pos.(pos)
	if !ok || p.last == 0 {
		return nil
	}
	if err := inbox.ValidateName(name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	c, _, err := mb.consumer(ctx, name)
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	// The position is asked only when the pull does not reach the batch
	// (it may be there already): a commit that finds its messages costs a
	// pull and an ack, not a request more.
	committed := func() (bool, error) {
		info, err := mb.floor(ctx, name)
		if err != nil {
			return false, fmt.Errorf("commit %s: %w", name, err)
		}
		return info.AckFloor.Stream >= p.last, nil
	}
	var upTo jetstream.Msg
	var upToSeq uint64
	for done, waits := false, 0; !done; {
		// The stream stores a message before its consumer has taken note
		// of it: a pull right after a read may find nothing yet. Such a
		// pull waits a little, a few times, before calling the batch held.
		var batch jetstream.MessageBatch
		if waits == 0 {
			batch, err = c.FetchNoWait(256)
		} else {
			batch, err = c.Fetch(256, jetstream.FetchMaxWait(commitPullWait))
		}
		if err != nil {
			return fmt.Errorf("commit %s: %w", name, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			meta, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("commit %s: %w", name, err)
			}
			switch s := meta.Sequence.Stream; {
			case s <= p.last:
				if s > upToSeq {
					upTo, upToSeq = msg, s
				}
				done = done || s == p.last
			default:
				if err := msg.Nak(); err != nil {
					return fmt.Errorf("commit %s: give back message %d: %w", name, s, err)
				}
				done = true
			}
		}
		if err := batch.Error(); err != nil {
			if unanswered(err) && ctx.Err() == nil {
				// The consumer has no leader yet (a node lost), or its node
				// shut down under the pull: ask again; what came is noted.
				if n == 0 {
					select {
					case <-ctx.Done():
					case <-time.After(50 * time.Millisecond):
					}
				}
				continue
			}
			return fmt.Errorf("commit %s: %w", name, err)
		}
		if n == 0 {
			if waits == 0 && upTo == nil {
				if at, err := committed(); err != nil || at {
					return err
				}
			}
			if waits == commitPullWaits {
				break
			}
			waits++
		}
	}
	if upTo == nil {
		// Only messages past the batch came: it is at or below the position,
		// or a dead commit holds it.
		if at, err := committed(); err != nil || at {
			return err
		}
	}
	if upTo != nil {
		if _, err := retried(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, upTo.DoubleAck(ctx) }); err != nil {
			return fmt.Errorf("commit %s: acknowledge: %w", name, err)
		}
		mb.sawFloor(name, upToSeq) // AckAll: the position is there, confirmed
	}
	if upToSeq < p.last {
		return fmt.Errorf("commit %s: messages up to %d: %w; they are read again once it times out", name, p.last, inbox.ErrHeld)
	}
	return nil
}

// HasUnread reports whether name has messages after its read position.
func (mb *Mailbox) HasUnread(ctx context.Context, name string) (bool, error) {
	if err := inbox.ValidateName(name); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	// Nothing stored after a position seen here is nothing unread: one
	// small direct get, not the consumer's info (its JSON built and
	// parsed), answers a reader woken for nothing. Something there may be
	// read already elsewhere: the info says.
	mb.mu.Lock()
	known, ok := mb.floors[name]
	mb.mu.Unlock()
	var stored uint64 // a message seen stored after the known position
	if ok && mb.direct && !mb.hasUnnamed(name) {
		raws, err := retried(ctx, func(ctx context.Context) ([]*jetstream.RawStreamMsg, error) {
			raws, _, err := mb.gets.get(ctx, inboxFilter(mb.team, name), known+1, 1)
			return raws, err
		})
		if err == nil && len(raws) == 0 {
			return false, nil
		}
		if err == nil {
			stored = raws[0].Sequence
		}
	}
	info, err := mb.floor(ctx, name)
	if err != nil {
		return false, err
	}
	// The consumer takes note of a message after the stream stores it:
	// just stored, it may not count as pending yet, but a message after
	// the read position is unread all the same.
	return info.NumPending > 0 || info.NumAckPending > 0 || stored > info.AckFloor.Stream, nil
}

// Watch signals on the returned channel when name's inbox may have
// something new: once at the start if anything is unread, then on every
// message published to it from anywhere. Signals coalesce. The channel is
// closed once ctx is done.
func (mb *Mailbox) Watch(ctx context.Context, name string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	// A subscription's handler may still run after Unsubscribe: closed
	// under mu keeps it from sending on the closed channel.
	var mu sync.Mutex
	closed := false
	signal := func() {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	if inbox.ValidateName(name) != nil {
		close(ch)
		return ch
	}
	// Subscribe before looking, so nothing published in between is missed.
	// A subscriber may hear of a message before the stream has stored it,
	// and a reader woken then finds nothing unread: each message signals
	// again once the stream has surely caught up, and a slow backstop
	// covers a later store (a cluster electing a leader).
	// One timer for the second signals, re-armed by each message heard: it
	// fires watchResignal after the last of a burst, which is after every
	// message of it (a subscription's handler runs on one goroutine).
	resignal := afterFunc(time.Hour, signal)
	resignal.Stop()
	var heard atomic.Bool
	heard.Store(true) // the start is news: a message may be on its way
	sub, err := mb.nc.Subscribe(inboxFilter(mb.team, name), func(*nats.Msg) {
		heard.Store(true)
		signal()
		resignal.Reset(watchResignal)
	})
	if err != nil {
		// No subscription: wake once so the reader looks, then at the backstop.
		signal()
	}
	if has, herr := mb.HasUnread(ctx, name); herr != nil || has {
		signal()
	}
	// What a backstop may have missed since the last: a message heard (its
	// store may come late), or a notification lost to a reconnect or to
	// the subscription falling behind.
	reconnects, dropped := mb.nc.Stats().Reconnects, 0
	news := func() bool {
		n := heard.Swap(false) || sub == nil
		if r := mb.nc.Stats().Reconnects; r != reconnects {
			reconnects, n = r, true
		}
		if sub != nil {
			if d, err := sub.Dropped(); err != nil || d != dropped {
				dropped, n = d, true
			}
		}
		return n
	}
	go func() {
		ticks, stopTicks := backstopTicks(watchBackstop)
		defer stopTicks()
		for n, quiet, done := 0, 0, false; !done; {
			select {
			case <-ctx.Done():
				done = true
			case <-ticks:
				n++
				if news() {
					quiet = 0
				} else {
					quiet++
				}
				due := quiet < watchNewsBackstops || n%watchFullBackstops == 0
				if due {
					signal()
				}
				backstopDone(due)
			}
		}
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		resignal.Stop()
		mu.Lock()
		closed = true
		close(ch)
		mu.Unlock()
	}()
	return ch
}
