package statefile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Storage is the step a Batcher leaves to its store: Commit reads the
// stored document, calls change on it once (again after a lost race, on
// the newer document) and stores the result when change reports a
// change. It returns the document as stored (or as read, when nothing
// changed) and the error of the read or the store. ctx is the batch's:
// it carries no one caller's cancellation (see Batcher.apply).
type Storage[T any] interface {
	Commit(ctx context.Context, change func(T) (T, bool)) (T, error)
}

// Batcher gathers the changes of a document and applies them in batches,
// one Storage.Commit each: changes waited for (Update, Change) that come
// while a commit is under way share the next one, submitted changes
// (Submit) wait submitWindow for company, and two changes of one key never
// share a commit. The file document (Doc) and the KV document
// (natsstore.Doc) are such batchers over their own storage. Each change's
// ctx is looked at just before it is applied: a change whose ctx is done
// by then is not, and fails with ctx.Err(); one whose ctx is done before
// it is queued does nothing at all.
type Batcher[T any] struct {
	what    string    // "registry": for error sentences
	empty   func() T  // the result of a failed batch
	clone   func(T) T // a copy of its own for a caller
	changed func(*T)  // counts one change (version, time)
	store   Storage[T]

	qmu     sync.Mutex
	queue   []*docUpdate[T] // changes waiting for the next commit
	writing bool            // a goroutine is committing (and will hand over the queue)
	armed   bool            // a timer will commit the submitted changes (Submit)
}

// submitWindow is how long a submitted change (Submit) waits for company
// before it is written: every change made meanwhile, submitted or waited
// for, shares its write, and a change waited for writes it at once. A
// large team's status changes come a few milliseconds apart, and each
// write rewrites the whole document (on JetStream too).
const submitWindow = 5 * time.Millisecond

// NewBatcher is the batcher of the document in s; what names it in error
// sentences, empty is a failed batch's result, clone copies a document for
// a caller (and for a change that may fail half-way), changed counts a
// change (nil: none).
func NewBatcher[T any](what string, empty func() T, clone func(T) T, changed func(*T), s Storage[T]) *Batcher[T] {
	if changed == nil {
		changed = func(*T) {}
	}
	return &Batcher[T]{what: what, empty: empty, clone: clone, changed: changed, store: s}
}

// Update applies fn in the next commit and returns the document as
// committed; ErrNoChange from fn stores nothing. Callers that arrive while
// a commit is under way are batched: the next committer applies all their
// functions in arrival order, so each change is still made exactly once
// and counted, but the document is stored once.
func (b *Batcher[T]) Update(ctx context.Context, fn func(*T) error) (T, error) {
	return b.wait(&docUpdate[T]{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)})
}

// UpdateInPlace is Update for a fn that returns its error before changing
// anything, so in a batch it needs no copy of its own to fail on.
func (b *Batcher[T]) UpdateInPlace(ctx context.Context, fn func(*T) error) (T, error) {
	return b.wait(&docUpdate[T]{ctx: ctx, fn: fn, wake: make(chan struct{}, 1), inPlace: true})
}

// Change is UpdateInPlace for a caller that needs no copy of the result.
func (b *Batcher[T]) Change(ctx context.Context, fn func(*T) error) error {
	return b.ChangeKeyed(ctx, "", fn)
}

// ChangeKeyed is Change for a change of key (say, one teammate's status):
// two changes of one key never share a commit, so the store holds each of
// them in turn, and whoever is told of one after its commit finds it there
// (a later change of the same key is in a later commit). "" is no key.
func (b *Batcher[T]) ChangeKeyed(ctx context.Context, key string, fn func(*T) error) error {
	_, err := b.wait(&docUpdate[T]{ctx: ctx, fn: fn, wake: make(chan struct{}, 1), inPlace: true, discard: true, key: key})
	return err
}

// wait queues u and waits for its outcome, committing if no one else is.
// The wait itself is not cut short by u's ctx: a change once queued may be
// committed by whoever commits, and its caller waits to learn whether.
func (b *Batcher[T]) wait(u *docUpdate[T]) (T, error) {
	if err := u.ctx.Err(); err != nil {
		return b.empty(), err
	}
	if b.enqueue(u) {
		<-u.wake // done, or handed the committer's role
		if u.done {
			return u.v, u.err
		}
	}
	b.write(u)
	return u.v, u.err
}

// Submit is Update without waiting: fn is applied with the next batch and
// after is called (on the committing goroutine, in submission order) once
// the change is stored or has failed. fn must be fit for UpdateInPlace.
// The next batch is committed at the latest submitWindow after Submit,
// sooner when a waiting change (Update, Flush) comes first or a commit is
// under way.
func (b *Batcher[T]) Submit(ctx context.Context, fn func(*T) error, after func(error)) {
	b.SubmitKeyed(ctx, "", fn, after)
}

// SubmitKeyed is Submit for a change of key, which shares no commit with
// another change of that key (see ChangeKeyed).
func (b *Batcher[T]) SubmitKeyed(ctx context.Context, key string, fn func(*T) error, after func(error)) {
	u := &docUpdate[T]{ctx: ctx, fn: fn, after: after, inPlace: true, key: key}
	b.qmu.Lock()
	b.queue = append(b.queue, u)
	arm := !b.writing && !b.armed // a committer under way takes it
	b.armed = b.armed || arm
	b.qmu.Unlock()
	if arm {
		time.AfterFunc(submitWindow, b.writeSubmitted)
	}
}

// writeSubmitted commits the changes submitted in the window, unless a
// committer has taken them (or is under way and will).
func (b *Batcher[T]) writeSubmitted() {
	b.qmu.Lock()
	b.armed = false
	if b.writing || len(b.queue) == 0 {
		b.qmu.Unlock()
		return
	}
	b.writing = true
	b.qmu.Unlock()
	b.write(nil)
}

// Flush returns once every change submitted before it is stored. It takes
// no ctx: it changes nothing, and what it waits for is bounded by the
// commits under way.
func (b *Batcher[T]) Flush() {
	_ = b.Change(context.Background(), func(*T) error { return ErrNoChange })
}

// enqueue adds u to the next batch and reports whether some goroutine is
// already committing (and so will take it); otherwise the caller must.
func (b *Batcher[T]) enqueue(u *docUpdate[T]) (taken bool) {
	b.qmu.Lock()
	defer b.qmu.Unlock()
	b.queue = append(b.queue, u)
	taken = b.writing
	b.writing = true
	return taken
}

// write commits batches until the queue is empty or its head is a caller
// that waits (which is then woken to commit the rest itself); self is the
// waiting caller that commits, if any.
func (b *Batcher[T]) write(self *docUpdate[T]) {
	for {
		b.qmu.Lock()
		batch := b.queue
		if n := keysOnce(batch); n < len(batch) {
			b.queue = append([]*docUpdate[T](nil), batch[n:]...)
			batch = batch[:n:n]
		} else {
			b.queue = nil
		}
		b.qmu.Unlock()
		b.applySafely(batch)
		// Report while still the committer, so that outcomes (and the
		// events they emit) come in the order of the changes.
		for _, u := range batch {
			switch {
			case u.after != nil:
				u.after(u.err)
			case u != self:
				u.wake <- struct{}{}
			}
		}
		b.qmu.Lock()
		var next *docUpdate[T]
		if len(b.queue) > 0 {
			next = b.queue[0]
		} else {
			b.writing = false
		}
		b.qmu.Unlock()
		switch {
		case next == nil:
			return
		case self != nil && !self.done:
			continue // its own change was left for the next commit (a key repeated)
		case next.wake != nil:
			next.wake <- struct{}{} // it commits the rest
			return
		case self != nil:
			go b.write(nil) // submitted changes wait for no one: commit them on
			return
		}
	}
}

// keysOnce is the length of the longest head of queue in which no key
// repeats: the changes one commit may carry.
func keysOnce[T any](queue []*docUpdate[T]) int {
	var seen map[string]bool
	for i, u := range queue {
		if u.key == "" {
			continue
		}
		if seen[u.key] {
			return i
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[u.key] = true
	}
	return len(queue)
}

// applySafely is apply that cannot leave the committer's role taken: a
// panic (a bug in a change function) fails the batch instead, so no caller
// waits forever for a commit that will never come.
func (b *Batcher[T]) applySafely(batch []*docUpdate[T]) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("internal error while writing the %s: %v (please report this)", b.what, r)
			for _, u := range batch {
				if !u.done {
					u.v, u.err, u.done = b.empty(), err, true
				}
			}
		}
	}()
	b.apply(batch)
}

// docUpdate is one caller's change waiting in a batch, and its outcome.
type docUpdate[T any] struct {
	ctx     context.Context // done before fn is applied: fn is not
	fn      func(*T) error
	wake    chan struct{} // a caller waits on it (Update)
	after   func(error)   // or is called back (Submit)
	inPlace bool          // fn fails before changing anything (UpdateInPlace)
	discard bool          // the caller wants no copy of the result (Change)
	key     string        // no two changes of one key share a commit ("": none)
	applied bool          // fn changed the document
	done    bool
	v       T
	err     error
}

// apply commits a batch: a change whose ctx is done is left out, each
// function that may fail after changing something runs on its own copy,
// so one that fails leaves no trace, then one store. After a lost race
// the storage calls change again on the newer document, and the batch is
// applied again from the start. The commit carries every caller's change,
// so it is given the first one's ctx without its cancellation: no one
// caller cuts the others' short, and the storage bounds its own wait.
func (b *Batcher[T]) apply(batch []*docUpdate[T]) {
	ran := false // past this point only applied changes share the commit's error
	change := func(v T) (T, bool) {
		ran = true
		changes := 0
		for _, u := range batch {
			u.applied, u.err = false, nil
			if err := u.ctx.Err(); err != nil {
				u.err = err
				continue
			}
			work := v
			if !u.inPlace {
				work = b.clone(v) // v may be a cache's, and fn may fail half-way
			}
			switch err := u.fn(&work); {
			case err == nil:
				v = work
				b.changed(&v)
				changes++
				u.applied = true
			case errors.Is(err, ErrNoChange):
			default:
				u.err = err
			}
		}
		return v, changes > 0
	}
	v, err := b.store.Commit(context.WithoutCancel(batch[0].ctx), change)
	for _, u := range batch {
		if !ran || u.applied {
			u.err = err
		}
		u.done = true
		if u.after == nil && !u.discard {
			if err != nil && !ran {
				u.v = b.empty()
			} else {
				u.v = b.clone(v) // callers must not share one document, nor a cache's
			}
		}
	}
}
