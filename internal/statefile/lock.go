// Package statefile writes agentteam's state files safely: locks other
// processes respect, one-line appends, atomic replacement, never through a
// symbolic link, and a JSON document changed only under its lock. It knows
// nothing of what the files hold.
package statefile

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// maxHeldFiles bounds the descriptors the lock table keeps open between
// calls (lock files included); past it, files of paths nobody holds are
// closed (and reopened on their next use). A 200-teammate team needs about 620.
const maxHeldFiles = 1024

// lockEntry is one locked path: its in-process mutex, its cross-process
// lock on path+".lock" (a flock(2) on a descriptor kept open), and the
// files kept open for it. lf and files are only touched while mu is held:
// a flock is held by an open file, not by a goroutine, so the mutex comes first.
type lockEntry struct {
	path  string // absolute
	mu    sync.Mutex
	lf    lockFile  // guarded by mu
	files heldFiles // guarded by mu
}

// lockTable maps an absolute path to its *lockEntry. It is process-wide on
// purpose: it mirrors the kernel's lock table, which is process-wide too, so
// two callers (two inbox Stores, or plain Lock callers) on the same file
// exclude each other.
// Entries are never removed; there is one per distinct locked path.
type lockTable struct {
	entries sync.Map     // string → *lockEntry
	open    atomic.Int64 // descriptors held across all entries
}

var locks lockTable

// Lock excludes other goroutines of this process and other processes from
// path until unlock is called. In-process exclusion comes first (a mutex per
// path), then flock(2) on the separate file path+".lock" (gofrs/flock off
// the unix systems), whose descriptor stays open from one lock to the next.
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
		v, _ = t.entries.LoadOrStore(abs, &lockEntry{path: abs, lf: newLockFile(), files: newHeldFiles()})
	}
	e := v.(*lockEntry)
	e.mu.Lock()
	// A link at the lock file's path is refused, not created through.
	opened, err := e.lf.lock(abs + ".lock")
	t.open.Add(int64(opened))
	if err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, linkRefusal(abs+".lock", err))
	}
	if opened > 0 && t.open.Load() > maxHeldFiles {
		t.trim(e)
	}
	return e, nil
}

// unlock releases the flock, then the mutex.
func (e *lockEntry) unlock() {
	locks.open.Add(-int64(e.lf.unlock() + e.files.unlock()))
	e.mu.Unlock()
}

// closeFiles closes the lock file and the files kept open for e, which
// nobody holds, and returns how many descriptors that closed.
func (e *lockEntry) closeFiles() int { return e.lf.close() + e.files.close() }

// Held is a path whose lock the caller holds (Hold), with the descriptors
// kept open for it from one hold to the next: the path's own, for appends,
// and that of one record file the lock guards (an inbox's read position).
// Keeping them saves an open and a close per write, which is most of what
// a write costs. A Held is used by one goroutine, until Unlock.
type Held struct{ e *lockEntry }

// Hold takes path's lock as Lock does and returns it held.
func Hold(path string) (Held, error) {
	e, err := locks.lock(path)
	if err != nil {
		return Held{}, err
	}
	return Held{e}, nil
}

// Unlock releases the lock; the kept descriptors stay open for the next hold.
func (h Held) Unlock() { h.e.unlock() }

// AppendLine writes line, and a trailing '\n' unless it has one, at the end
// of the held path in one write call, so concurrent writers never
// interleave lines. A file removed or replaced since the last append is
// noticed and opened anew; a torn tail (a full disk) is cut off again.
func (h Held) AppendLine(line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		l := make([]byte, len(line)+1)
		copy(l, line)
		l[len(line)] = '\n'
		line = l
	}
	opened, err := h.e.files.appendLine(h.e.path, line)
	locks.open.Add(int64(opened))
	if opened > 0 && locks.open.Load() > maxHeldFiles {
		locks.trim(h.e)
	}
	return err
}

// WriteRecord writes rec over the file path, which the held lock guards,
// in place: rec is a record of fixed length, so a write makes no new file.
// A file of another length (an earlier format) is replaced whole once
// instead (ReplaceFile), so no reader sees a mix of two. Each version gets
// a modification time of its own, as with ReplaceFile.
func (h Held) WriteRecord(path string, rec []byte) error {
	opened, err := h.e.files.writeRecord(path, rec)
	locks.open.Add(int64(opened))
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
		t.open.Add(-int64(e.closeFiles()))
		e.mu.Unlock()
		return t.open.Load() > maxHeldFiles/2
	})
}

// CloseKept closes the descriptors kept open for every path under dir that
// nobody holds now (a store being closed, a disk being unmounted); they are
// opened again when next needed.
func CloseKept(dir string) { locks.closeKept(dir) }

// KeptFiles is how many descriptors are kept open between holds, over all
// paths; past a budget of 1024, those of idle paths are closed. For tests
// and diagnostics.
func KeptFiles() int64 { return locks.open.Load() }

func (t *lockTable) closeKept(dir string) {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	t.entries.Range(func(k, v any) bool {
		if !strings.HasPrefix(k.(string), prefix) {
			return true
		}
		e := v.(*lockEntry)
		if e.mu.TryLock() {
			t.open.Add(-int64(e.closeFiles()))
			e.mu.Unlock()
		}
		return true
	})
}
