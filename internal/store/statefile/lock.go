// Package statefile writes agentteam's state files safely: locks other
// processes respect, one-line appends, atomic replacement, never through a
// symbolic link, and a JSON document changed only under its lock. It knows
// nothing of what the files hold.
package statefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// maxHeldFiles bounds the descriptors the lock table keeps open between
// calls (lock files included); past it, files of paths nobody holds are
// closed (and reopened on their next use). A 200-teammate team needs about
// 210: one per inbox (its log, which is its lock too), a few for the rest.
const maxHeldFiles = 1024

// lockEntry is one locked path: its in-process mutex, its cross-process
// lock (a flock(2) on a descriptor kept open: of path+".lock", or, for a
// log locked on itself (HoldLog), of the log's own append descriptor), and
// the files kept open for it. lf and files are only touched while mu is
// held: a flock is held by an open file, not by a goroutine, so the mutex
// comes first.
type lockEntry struct {
	path  string // absolute
	self  bool   // locked on the file itself (HoldLog), never through path+".lock"
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
	e, err := locks.lock(path, false, true)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(e.unlock) }, nil
}

// lock takes path's mutex and flock and returns its entry, held. self
// locks the file itself (where the system allows, see selfLocking), which
// create makes if it is missing; a lock file is always created.
func (t *lockTable) lock(path string, self, create bool) (*lockEntry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	self = self && selfLocking
	v, ok := t.entries.Load(abs)
	if !ok {
		v, _ = t.entries.LoadOrStore(abs, &lockEntry{path: abs, self: self, lf: newLockFile(), files: newHeldFiles()})
	}
	e := v.(*lockEntry)
	if e.self != self {
		// Two kinds of lock on one path would not exclude each other.
		return nil, fmt.Errorf("lock %s: it is locked both on itself and through a lock file", path)
	}
	e.mu.Lock()
	var opened int
	if self {
		opened, err = e.files.lockSelf(abs, create)
		if err != nil {
			err = linkRefusal(abs, err)
		}
	} else {
		// A link at the lock file's path is refused, not created through.
		opened, err = e.lf.lock(abs + ".lock")
		if err != nil {
			err = linkRefusal(abs+".lock", err)
		}
	}
	t.open.Add(int64(opened))
	if err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if opened > 0 && t.open.Load() > maxHeldFiles {
		t.trim(e)
	}
	return e, nil
}

// unlock releases the flock, then the mutex.
func (e *lockEntry) unlock() {
	if e.self {
		locks.open.Add(-int64(e.files.unlockSelf()))
	} else {
		locks.open.Add(-int64(e.lf.unlock() + e.files.unlock()))
	}
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
	e, err := locks.lock(path, false, true)
	if err != nil {
		return Held{}, err
	}
	return Held{e}, nil
}

// HoldLog takes the lock of the append-only log path on the log itself:
// flock(2) on its append descriptor, kept open from one hold to the next,
// so a log costs one file and one descriptor, not a lock file besides.
// Once the flock is held, an lstat checks that path still names that file;
// a log removed or renamed over is locked anew, as a fresh open would be.
// create makes a missing log (empty); without it a missing log is an error
// wrapping fs.ErrNotExist and nothing is made. A link at path is refused,
// and so is anything but a regular file (a FIFO is never waited on).
// Every locker of path must use HoldLog: a lock through path+".lock" would
// not exclude it. Off the unix systems it is Hold (a lock file).
func HoldLog(path string, create bool) (Held, error) {
	e, err := locks.lock(path, true, create)
	if err != nil {
		return Held{}, err
	}
	return Held{e}, nil
}

// SameFile reports whether id (IDOf an open file, or of an lstat) is the
// file the lock is held on, or for a Hold, the file path names now: the
// file was not replaced since id was taken. A zero id is taken as the same.
func (h Held) SameFile(id FileID) bool {
	if id == (FileID{}) {
		return true
	}
	if !h.e.self {
		now, err := os.Lstat(h.e.path)
		return err == nil && IDOf(now) == id
	}
	return h.e.files.sameFile(id)
}

// Attr reads the extended attribute name of the log a HoldLog holds into
// buf and returns its length: ErrNoAttr when it has none, an error wrapping
// errors.ErrUnsupported where the file system (or the system) keeps none,
// ErrAttrTooLong when it does not fit in buf.
func (h Held) Attr(name string, buf []byte) (int, error) {
	return h.e.files.attr(h.e.path, name, buf)
}

// SetAttr sets the extended attribute name of the log a HoldLog holds to
// value, in one call that readers see whole (the old value or the new).
func (h Held) SetAttr(name string, value []byte) error {
	return h.e.files.setAttr(h.e.path, name, value)
}

// RemoveAttr removes the extended attribute name of the log a HoldLog
// holds; one that is not there is no error.
func (h Held) RemoveAttr(name string) error {
	return h.e.files.removeAttr(h.e.path, name)
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
	opened, err := h.e.files.appendLine(h.e.path, line, h.e.self)
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
