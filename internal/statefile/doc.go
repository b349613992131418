package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrNoChange lets an update function decline to write.
var ErrNoChange = errors.New("no change")

// Document is what a Doc holds: it can copy itself deeply (so a cached
// value is never shared) and count a change (a version, a time).
type Document[T any] interface {
	Clone() T
	Changed()
}

// Doc is one JSON file that is only changed by read-modify-write under a
// lock other processes respect, and replaced whole, so no update is lost
// and no reader sees half a file. The registry and the task board are such
// files. It keeps the last version this process read or wrote and skips
// the parse while the file on disk is that same file.
type Doc[T Document[T]] struct {
	// OnWriteError, when set before first use, sees every failed write.
	OnWriteError func(error)

	path  string
	what  string   // "registry", "task board": for error sentences
	empty func() T // the document of a missing file

	mu       sync.Mutex
	cached   T
	cachedFI os.FileInfo

	buf []byte // store's buffer, reused by the next write (jsonAppender)

	qmu     sync.Mutex
	queue   []*docUpdate[T] // changes waiting for the next write
	writing bool            // a goroutine is writing (and will hand over the queue)
	armed   bool            // a timer will write the submitted changes (Submit)
}

// submitWindow is how long a submitted change (Submit) waits for company
// before it is written: every change made meanwhile, submitted or waited
// for, shares its write, and a change waited for writes it at once. A
// large team's status changes come a few milliseconds apart, and each
// write rewrites the whole document and makes a new file (issue 8).
const submitWindow = 5 * time.Millisecond

// NewDoc is the document in the file path, created by the first change;
// what names it in error sentences ("registry"), and empty is the
// document of a missing file.
func NewDoc[T Document[T]](path, what string, empty func() T) *Doc[T] {
	return &Doc[T]{path: path, what: what, empty: empty}
}

// Path is the document's file.
func (d *Doc[T]) Path() string { return d.path }

// Read returns the document as it is on disk; a missing file is empty().
func (d *Doc[T]) Read() (T, error) {
	fi, err := os.Stat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return d.empty(), nil
	}
	if err != nil {
		return d.empty(), fmt.Errorf("read %s: %w", d.what, err)
	}
	d.mu.Lock()
	if d.cachedFI != nil && sameVersion(fi, d.cachedFI) {
		v := d.cached.Clone()
		d.mu.Unlock()
		return v, nil
	}
	d.mu.Unlock()
	v, err := d.parse()
	if err != nil {
		return v, err
	}
	d.remember(v, fi)
	return v, nil
}

// parse reads and decodes the file; a missing file is empty().
func (d *Doc[T]) parse() (T, error) {
	data, err := ReadFile(d.path, math.MaxInt64)
	if errors.Is(err, fs.ErrNotExist) {
		return d.empty(), nil
	}
	if err != nil {
		return d.empty(), fmt.Errorf("read %s: %w", d.what, err)
	}
	v := d.empty()
	if err := json.Unmarshal(data, &v); err != nil {
		return d.empty(), fmt.Errorf("%s %s is not valid JSON (%v); fix or remove it", d.what, d.path, err)
	}
	return v, nil
}

// Update applies fn under the lock and writes the result, counting the
// change; ErrNoChange from fn writes nothing. Callers that arrive while a
// write is under way are batched: the next writer applies all their
// functions in arrival order in one read-modify-write, so each change is
// still made exactly once and counted, but the file is written once.
func (d *Doc[T]) Update(fn func(*T) error) (T, error) {
	return d.wait(&docUpdate[T]{fn: fn, wake: make(chan struct{}, 1)})
}

// UpdateInPlace is Update for a fn that returns its error before changing
// anything, so in a batch it needs no copy of its own to fail on.
func (d *Doc[T]) UpdateInPlace(fn func(*T) error) (T, error) {
	return d.wait(&docUpdate[T]{fn: fn, wake: make(chan struct{}, 1), inPlace: true})
}

// Change is UpdateInPlace for a caller that needs no copy of the result:
// a change waited for that costs no copy of the document.
func (d *Doc[T]) Change(fn func(*T) error) error { return d.ChangeKeyed("", fn) }

// ChangeKeyed is Change for a change of key (say, one teammate's status):
// two changes of one key never share a write, so the file holds each of
// them in turn, and whoever is told of one after its write finds it there
// (a later change of the same key is in a later write). "" is no key.
func (d *Doc[T]) ChangeKeyed(key string, fn func(*T) error) error {
	_, err := d.wait(&docUpdate[T]{fn: fn, wake: make(chan struct{}, 1), inPlace: true, discard: true, key: key})
	return err
}

func (d *Doc[T]) wait(u *docUpdate[T]) (T, error) {
	if d.enqueue(u) {
		<-u.wake // done, or handed the writer's role
		if u.done {
			return u.v, u.err
		}
	}
	d.write(u)
	return u.v, u.err
}

// Submit is Update without waiting: fn is applied with the next batch and
// after is called (on the writing goroutine, in submission order) once the
// change is on disk or has failed. fn must be fit for UpdateInPlace. The
// next batch is written at the latest submitWindow after Submit, sooner
// when a waiting change (Update, Flush) comes first or a write is under way.
func (d *Doc[T]) Submit(fn func(*T) error, after func(error)) { d.SubmitKeyed("", fn, after) }

// SubmitKeyed is Submit for a change of key, which shares no write with
// another change of that key (see ChangeKeyed).
func (d *Doc[T]) SubmitKeyed(key string, fn func(*T) error, after func(error)) {
	u := &docUpdate[T]{fn: fn, after: after, inPlace: true, key: key}
	d.qmu.Lock()
	d.queue = append(d.queue, u)
	arm := !d.writing && !d.armed // a writer under way takes it
	d.armed = d.armed || arm
	d.qmu.Unlock()
	if arm {
		time.AfterFunc(submitWindow, d.writeSubmitted)
	}
}

// writeSubmitted writes the changes submitted in the window, unless a
// writer has taken them (or is under way and will).
func (d *Doc[T]) writeSubmitted() {
	d.qmu.Lock()
	d.armed = false
	if d.writing || len(d.queue) == 0 {
		d.qmu.Unlock()
		return
	}
	d.writing = true
	d.qmu.Unlock()
	d.write(nil)
}

// Flush returns once every change submitted before it is on disk.
func (d *Doc[T]) Flush() {
	_ = d.Change(func(*T) error { return ErrNoChange })
}

// enqueue adds u to the next batch and reports whether some goroutine is
// already writing (and so will take it); otherwise the caller must write.
func (d *Doc[T]) enqueue(u *docUpdate[T]) (taken bool) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	d.queue = append(d.queue, u)
	taken = d.writing
	d.writing = true
	return taken
}

// write applies batches until the queue is empty or its head is a caller
// that waits (which is then woken to write the rest itself); self is the
// waiting caller that writes, if any.
func (d *Doc[T]) write(self *docUpdate[T]) {
	for {
		d.qmu.Lock()
		batch := d.queue
		if n := keysOnce(batch); n < len(batch) {
			d.queue = append([]*docUpdate[T](nil), batch[n:]...)
			batch = batch[:n:n]
		} else {
			d.queue = nil
		}
		d.qmu.Unlock()
		d.applySafely(batch)
		// Report while still the writer, so that outcomes (and the events
		// they emit) come in the order of the changes, batch after batch.
		for _, b := range batch {
			switch {
			case b.after != nil:
				b.after(b.err)
			case b != self:
				b.wake <- struct{}{}
			}
		}
		d.qmu.Lock()
		var next *docUpdate[T]
		if len(d.queue) > 0 {
			next = d.queue[0]
		} else {
			d.writing = false
		}
		d.qmu.Unlock()
		switch {
		case next == nil:
			return
		case self != nil && !self.done:
			continue // its own change was left for the next write (a key repeated)
		case next.wake != nil:
			next.wake <- struct{}{} // it writes the rest
			return
		case self != nil:
			go d.write(nil) // submitted changes wait for no one: write them on
			return
		}
	}
}

// keysOnce is the length of the longest head of queue in which no key
// repeats: the changes one write may carry.
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

// applySafely is apply that cannot leave the writer's role taken: a panic
// (a bug in a change function) fails the batch instead, so no caller waits
// forever for a write that will never come.
func (d *Doc[T]) applySafely(batch []*docUpdate[T]) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("internal error while writing the %s: %v (please report this)", d.what, r)
			for _, b := range batch {
				if !b.done {
					b.v, b.err, b.done = d.empty(), err, true
				}
			}
		}
	}()
	d.apply(batch)
}

// docUpdate is one caller's change waiting in a batch, and its outcome.
type docUpdate[T any] struct {
	fn      func(*T) error
	wake    chan struct{} // a caller waits on it (Update)
	after   func(error)   // or is called back (Submit)
	inPlace bool          // fn fails before changing anything (UpdateInPlace)
	discard bool          // the caller wants no copy of the result (Change)
	key     string        // no two changes of one key share a write ("": none)
	applied bool          // fn changed the document
	done    bool
	v       T
	err     error
}

// apply runs a batch under the lock: each function that may fail after
// changing something on its own copy, so one that fails leaves no trace,
// then one write. The document is taken from the cache, not copied, and
// put back once written: a large registry's copies were a tenth of a
// 200-teammate run's CPU (issue 8), so the only copies left are the
// results handed to callers that wait for one.
func (d *Doc[T]) apply(batch []*docUpdate[T]) {
	ran := false // past this point only applied changes share the write's error
	finish := func(v T, err error) {
		for _, b := range batch {
			if !ran || b.applied {
				b.err = err
			}
			b.done = true
			if b.after == nil && !b.discard {
				b.v = v.Clone() // callers must not share one document, nor the cache's
			}
		}
	}
	unlock, err := Lock(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		// First write: make the directory, then lock again.
		if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
			finish(d.empty(), fmt.Errorf("create %s directory: %w", d.what, err))
			return
		}
		unlock, err = Lock(d.path)
	}
	if err != nil {
		finish(d.empty(), fmt.Errorf("lock %s: %w", d.what, err))
		return
	}
	defer unlock()
	v, fi, err := d.take()
	if err != nil {
		finish(v, err)
		return
	}
	changes := 0
	ran = true
	for _, b := range batch {
		work := v
		if !b.inPlace {
			work = v.Clone() // v is the cache's, and fn may fail half-way
		}
		switch err := b.fn(&work); {
		case err == nil:
			v = work
			v.Changed()
			changes++
			b.applied = true
		case errors.Is(err, ErrNoChange):
		default:
			b.err = err
		}
	}
	if changes == 0 {
		if fi != nil {
			d.putBack(v, fi)
		}
		finish(v, nil)
		return
	}
	finish(v, d.store(v))
}

// take returns the document as it is on disk for a change, with the file's
// identity (nil for a missing file). The caller holds the lock: the cached
// version, if it is still the file's, is handed over without a copy and
// the cache is empty until putBack or store fills it again.
func (d *Doc[T]) take() (T, os.FileInfo, error) {
	fi, err := os.Stat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return d.empty(), nil, nil
	}
	if err != nil {
		return d.empty(), nil, fmt.Errorf("read %s: %w", d.what, err)
	}
	d.mu.Lock()
	if d.cachedFI != nil && sameVersion(fi, d.cachedFI) {
		v := d.cached
		var zero T
		d.cached, d.cachedFI = zero, nil
		d.mu.Unlock()
		return v, fi, nil
	}
	d.mu.Unlock()
	v, err := d.parse()
	if err != nil {
		return v, nil, err
	}
	return v, fi, nil
}

// putBack caches v, unchanged since take, as the version fi.
func (d *Doc[T]) putBack(v T, fi os.FileInfo) {
	d.mu.Lock()
	d.cached, d.cachedFI = v, fi
	d.mu.Unlock()
}

// store replaces the file with v and remembers it as the cached version.
// The JSON is compact: the registry is rewritten whole at every change, and
// indenting it was a tenth of a large team's CPU (issue 8).
func (d *Doc[T]) store(v T) error {
	var data []byte
	var err error
	if a, ok := any(v).(jsonAppender); ok {
		// The writer's buffer of the last write: a large new one each time
		// cost more than the encoding it held. Only the writer, holding
		// the lock, uses it, and ReplaceFile keeps none of it.
		data, err = a.AppendJSON(d.buf[:0])
		if cap(data) <= 8<<20 {
			d.buf = data
		}
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", d.what, err)
	}
	if err := ReplaceFile(d.path, append(data, '\n'), 0o644); err != nil {
		if d.OnWriteError != nil {
			d.OnWriteError(err)
		}
		return fmt.Errorf("write %s: %w", d.what, err)
	}
	if fi, err := os.Stat(d.path); err == nil {
		d.putBack(v, fi) // v is the writer's own: callers were given copies
	}
	return nil
}

// jsonAppender is a document that writes its own JSON, the same bytes as
// json.Marshal's but faster (the registry: its members' JSON is kept).
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

func (d *Doc[T]) remember(v T, fi os.FileInfo) {
	d.mu.Lock()
	d.cached, d.cachedFI = v.Clone(), fi
	d.mu.Unlock()
}

// sameVersion: every write renames a new file into place, so the same file
// (device and inode) with the same size and time is the same version.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
