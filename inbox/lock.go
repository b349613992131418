package inbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gofrs/flock"
)

// maxHeldFiles bounds the descriptors the lock table keeps open between
// calls; past it, files of paths nobody holds are closed (and reopened on
// their next use). A 200-teammate team needs about 420.
const maxHeldFiles = 1024

// lockEntry is one locked path: its in-process mutex, its cross-process
// lock on path+".lock", and the files kept open for it. fl and files are
// only touched while mu is held: one *flock.Flock shared by goroutines is
// not a mutex, so the mutex comes first.
type lockEntry struct {
	path  string // absolute
	mu    sync.Mutex
	fl    *flock.Flock // guarded by mu
	files heldFiles    // guarded by mu
}

// lockTable maps an absolute path to its *lockEntry. It is process-wide on
// purpose: it mirrors the kernel's lock table, which is process-wide too, so
// two Stores (or plain Lock callers) on the same file exclude each other.
// Entries are never removed; there is one per distinct locked path.
type lockTable struct {
	entries sync.Map     // string → *lockEntry
	open    atomic.Int64 // descriptors held across all entries
}

var locks lockTable

// Lock excludes other goroutines of this process and other processes from
// path until unlock is called. In-process exclusion comes first (a mutex per
// path), then gofrs/flock on the separate file path+".lock".
// unlock is safe to call more than once.
func Lock(path string) (unlock func(), err error) {
	e, err := locks.lock(path)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(e.unlock) }, nil
}

// lock takes path's mutex and flock and returns its entry, held.
func (t *lockTable) lock(path string) (*lockEntry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	v, ok := t.entries.Load(abs)
	if !ok {
		v, _ = t.entries.LoadOrStore(abs, &lockEntry{path: abs, files: newHeldFiles()})
	}
	e := v.(*lockEntry)
	e.mu.Lock()
	if e.fl == nil {
		opts := []flock.Option{flock.SetPermissions(0o644)}
		if oNoFollow != 0 {
			// flock's own flags, plus: a link here is refused, not created through.
			opts = append(opts, flock.SetFlag(os.O_CREATE|os.O_RDONLY|oNoFollow))
		}
		e.fl = flock.New(abs+".lock", opts...)
	}
	if err := e.fl.Lock(); err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, linkRefusal(abs+".lock", err))
	}
	return e, nil
}

// unlock releases the flock, then the mutex.
func (e *lockEntry) unlock() {
	_ = e.fl.Unlock()
	locks.open.Add(-int64(e.files.unlock()))
	e.mu.Unlock()
}

// appendLine writes line at the end of e's file; e must be held.
func (t *lockTable) appendLine(e *lockEntry, line []byte) error {
	opened, err := e.files.appendLine(e.path, line)
	t.open.Add(int64(opened))
	if opened > 0 && t.open.Load() > maxHeldFiles {
		t.trim(e)
	}
	return err
}

// writeCursor writes rec over the read position file path; e, the inbox
// log's entry, must be held.
func (t *lockTable) writeCursor(e *lockEntry, path string, rec []byte) error {
	opened, err := e.files.writeCursor(path, rec)
	t.open.Add(int64(opened))
	return err
}

// trim closes the files of entries nobody holds until half the budget is
// left; busy entries are skipped rather than waited for.
func (t *lockTable) trim(keep *lockEntry) {
	t.entries.Range(func(_, v any) bool {
		e := v.(*lockEntry)
		if e == keep || !e.mu.TryLock() {
			return true
		}
		t.open.Add(-int64(e.files.close()))
		e.mu.Unlock()
		return t.open.Load() > maxHeldFiles/2
	})
}

// release closes the kept files of every idle path under dir (Store.Close).
func (t *lockTable) release(dir string) {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	t.entries.Range(func(k, v any) bool {
		if !strings.HasPrefix(k.(string), prefix) {
			return true
		}
		e := v.(*lockEntry)
		if e.mu.TryLock() {
			t.open.Add(-int64(e.files.close()))
			e.mu.Unlock()
		}
		return true
	})
}
