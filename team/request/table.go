// Package request keeps the team's open requests — shutdown, plan
// approval, handoff, and any protocol that waits for an answer — in one
// table: each has an id, a kind, its parties, a deadline and, once closed,
// an outcome. One timer per request; every callback it runs is owned by
// the table, and Close stops the timers and waits for callbacks already
// running, as net/http's Server.Shutdown does.
package request

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Kind names what a request asks for.
type Kind string

// Outcome is how a request closed.
type Outcome string

// Outcomes every protocol shares; a protocol may add its own.
const (
	Approved  Outcome = "approved"
	Rejected  Outcome = "rejected"
	Expired   Outcome = "expired"   // its deadline passed without an answer
	Cancelled Outcome = "cancelled" // withdrawn, or the team stopped
)

// ErrClosed is returned by Open once the table is closed.
var ErrClosed = errors.New("the team is stopping: no new requests")

// Request is one open or closed request.
type Request struct {
	ID       string
	Kind     Kind
	From, To string // who asks, who must answer
	Opened   time.Time
	Deadline time.Time
	Outcome  Outcome // "" while open
}

type entry struct {
	Request
	timer *time.Timer
	done  chan struct{} // closed when the request closes
}

// Table is the set of open requests of one team. It is safe for
// concurrent use.
type Table struct {
	mu     sync.Mutex
	open   map[string]*entry
	closed bool
	wg     sync.WaitGroup // running expiry callbacks
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{open: map[string]*entry{}} }

// Open registers r (its ID must be new) and arms its deadline: when it
// passes with r still open, r closes as Expired and onExpire runs, on a
// goroutine the table owns. A zero timeout means no deadline.
func (t *Table) Open(r Request, timeout time.Duration, onExpire func(Request)) (Request, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return Request{}, ErrClosed
	}
	if _, dup := t.open[r.ID]; dup || r.ID == "" {
		return Request{}, errors.New("request id " + r.ID + " is empty or already open")
	}
	r.Outcome = ""
	if r.Opened.IsZero() {
		r.Opened = time.Now().UTC()
	}
	e := &entry{Request: r, done: make(chan struct{})}
	if timeout > 0 {
		e.Deadline = r.Opened.Add(timeout)
		e.timer = time.AfterFunc(timeout, func() { t.expire(e, onExpire) })
	}
	t.open[r.ID] = e
	return e.Request, nil
}

// expire closes e as Expired if it is still open and runs onExpire,
// counted so that Close waits for it.
func (t *Table) expire(e *entry, onExpire func(Request)) {
	t.mu.Lock()
	if t.closed || t.open[e.ID] != e {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1)
	r := t.closeLocked(e, Expired)
	t.mu.Unlock()
	defer t.wg.Done()
	if onExpire != nil {
		onExpire(r)
	}
}

func (t *Table) closeLocked(e *entry, o Outcome) Request {
	delete(t.open, e.ID)
	if e.timer != nil {
		e.timer.Stop()
	}
	e.Outcome = o
	close(e.done)
	return e.Request
}

// Match says which open request a caller may close: of this kind, and,
// when set, with this asker or this answerer.
type Match struct {
	Kind     Kind
	From, To string
}

func (m Match) fits(r Request) bool {
	return r.Kind == m.Kind && (m.From == "" || r.From == m.From) && (m.To == "" || r.To == m.To)
}

// Answer closes the open request id with outcome o when it fits m, and
// reports whether it did: a request already answered, expired or of
// another kind or party is left as it is.
func (t *Table) Answer(id string, m Match, o Outcome) (Request, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.open[id]
	if !ok || !m.fits(e.Request) {
		return Request{}, false
	}
	return t.closeLocked(e, o), true
}

// Get returns the open request id.
func (t *Table) Get(id string) (Request, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.open[id]
	if !ok {
		return Request{}, false
	}
	return e.Request, true
}

// Find returns an open request that fits m (the oldest, if several).
func (t *Table) Find(m Match) (Request, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var found *entry
	for _, e := range t.open {
		if m.fits(e.Request) && (found == nil || e.Opened.Before(found.Opened)) {
			found = e
		}
	}
	if found == nil {
		return Request{}, false
	}
	return found.Request, true
}

// List returns the open requests, oldest first.
func (t *Table) List() []Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Request, 0, len(t.open))
	for _, e := range t.open {
		out = append(out, e.Request)
	}
	sortByOpened(out)
	return out
}

// Wait blocks until request id closes, and returns how; ctx ending first
// returns its error and leaves the request open. An id that is not open
// returns false at once.
func (t *Table) Wait(ctx context.Context, id string) (Outcome, bool, error) {
	t.mu.Lock()
	e, ok := t.open[id]
	t.mu.Unlock()
	if !ok {
		return "", false, nil
	}
	select {
	case <-e.done:
		return e.Outcome, true, nil
	case <-ctx.Done():
		return "", true, ctx.Err()
	}
}

// Close cancels every open request (without running their callbacks),
// refuses new ones, and waits for expiry callbacks already running.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	for _, e := range t.open {
		t.closeLocked(e, Cancelled)
	}
	t.mu.Unlock()
	t.wg.Wait()
}
