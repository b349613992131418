package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
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

	// Update, Change, Submit and the rest are the batcher's: a batch is
	// one read-modify-write under the lock. A change's ctx is looked at
	// once the lock is held, just before it is applied (the wait for the
	// lock is not cut short: a flock has no deadline).
	*batcher[T]
}

// batcher names the embedded Batcher so that the field stays unexported.
type batcher[T any] = Batcher[T]

// NewDoc is the document in the file path, created by the first change;
// what names it in error sentences ("registry"), and empty is the
// document of a missing file.
func NewDoc[T Document[T]](path, what string, empty func() T) *Doc[T] {
	d := &Doc[T]{path: path, what: what, empty: empty}
	d.batcher = NewBatcher(what, empty, func(v T) T { return v.Clone() }, func(v *T) { (*v).Changed() }, fileStorage[T]{d})
	return d
}

// Path is the document's file.
func (d *Doc[T]) Path() string { return d.path }

// Read returns the document as it is on disk; a missing file is empty().
func (d *Doc[T]) Read(ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		return d.empty(), err
	}
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

// fileStorage is the file's step of a batch: under the lock, the document
// is taken from the cache, not copied, and put back once written: a large
// registry's copies were a tenth of a 200-teammate run's CPU, so
// the only copies left are the results handed to callers that wait for one.
type fileStorage[T Document[T]] struct{ d *Doc[T] }

// Commit takes the lock however long it is held elsewhere: ctx (the
// batch's, never cancelled) has nothing to cut short here, each change's
// own being looked at by change.
func (s fileStorage[T]) Commit(_ context.Context, change func(T) (T, bool)) (T, error) {
	d := s.d
	unlock, err := Lock(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		// First write: make the directory, then lock again.
		if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
			return d.empty(), fmt.Errorf("create %s directory: %w", d.what, err)
		}
		unlock, err = Lock(d.path)
	}
	if err != nil {
		return d.empty(), fmt.Errorf("lock %s: %w", d.what, err)
	}
	defer unlock()
	v, fi, err := d.take()
	if err != nil {
		return v, err
	}
	v, changed := change(v)
	if !changed {
		if fi != nil {
			d.putBack(v, fi)
		}
		return v, nil
	}
	return v, d.store(v)
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
// indenting it was a tenth of a large team's CPU.
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
