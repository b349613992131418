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
	d.remember(v, fi)
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
func (d *Doc[T]) Submit(fn func(*T) error, after func(error)) {
	u := &docUpdate[T]{fn: fn, after: after, inPlace: true}
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
	_, _ = d.Update(func(*T) error { return ErrNoChange })
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
		d.queue = nil
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
		case next.wake != nil:
			next.wake <- struct{}{} // it writes the rest
			return
		case self != nil:
			go d.write(nil) // submitted changes wait for no one: write them on
			return
		}
	}
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
	applied bool          // fn changed the document
	done    bool
	v       T
	err     error
}

// apply runs a batch under the lock: each function on its own copy when
// there are several, so one that fails leaves no trace, then one write.
func (d *Doc[T]) apply(batch []*docUpdate[T]) {
	ran := false // past this point only applied changes share the write's error
	finish := func(v T, err error) {
		for i, b := range batch {
			if !ran || b.applied {
				b.err = err
			}
			b.v, b.done = v, true
			if i < len(batch)-1 && b.after == nil {
				b.v = v.Clone() // callers must not share one document
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
	v, err := d.Read()
	if err != nil {
		finish(v, err)
		return
	}
	changes := 0
	ran = true
	for _, b := range batch {
		work := v
		if len(batch) > 1 && !b.inPlace {
			work = v.Clone()
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
		finish(v, nil)
		return
	}
	finish(v, d.store(v))
}

// store replaces the file with v and remembers it as the cached version.
// The JSON is compact: the registry is rewritten whole at every change, and
// indenting it was a tenth of a large team's CPU (issue 8).
func (d *Doc[T]) store(v T) error {
	data, err := json.Marshal(v)
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
		d.remember(v, fi)
	}
	return nil
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
