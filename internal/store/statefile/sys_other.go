//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package statefile

import (
	"io"
	"io/fs"
	"os"

	"github.com/gofrs/flock"
)

// oNoFollow is 0 where open has no O_NOFOLLOW; Open looks first instead.
const oNoFollow = 0

// selfLocking is false here: HoldLog takes a lock file, as Hold does (a
// lock on the log itself would keep other processes from reading it).
const selfLocking = false

// openFile is os.OpenFile here.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// heldFiles, off the unix systems, keeps nothing open: each call opens
// the files it needs and closes them again.
type heldFiles struct{}

func newHeldFiles() heldFiles { return heldFiles{} }

func (h *heldFiles) unlock() (closed int) { return 0 }

// appendLine opens path for appending, writes line in one call and closes it.
func (h *heldFiles) appendLine(path string, line []byte, _ bool) (opened int, err error) {
	f, err := Open(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := f.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil && n > 0 {
		// Cut the torn tail off again (the caller holds the lock), or it
		// would glue itself to the next line.
		if fi, serr := f.Stat(); serr == nil {
			_ = f.Truncate(fi.Size() - int64(n))
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return 0, err
}

// writeRecord replaces the record file whole.
func (h *heldFiles) writeRecord(path string, rec []byte) (opened int, err error) {
	return 0, ReplaceFile(path, rec, 0o644)
}

func (h *heldFiles) close() int { return 0 }

// lockSelf is never called here (selfLocking is false).
func (h *heldFiles) lockSelf(path string, create bool) (opened int, err error) {
	return 0, &fs.PathError{Op: "lock", Path: path, Err: errNotHeld}
}

func (h *heldFiles) unlockSelf() (closed int) { return 0 }

func (h *heldFiles) attr(path, name string, buf []byte) (int, error) {
	return fdAttr(-1, path, name, buf)
}

func (h *heldFiles) setAttr(path, name string, value []byte) error {
	return fdSetAttr(-1, path, name, value)
}

func (h *heldFiles) removeAttr(path, name string) error {
	return fdRemoveAttr(-1, path, name)
}

// lockFile, off the unix systems, is gofrs/flock, which opens the lock
// file at each lock and closes it at each unlock.
type lockFile struct{ fl *flock.Flock }

func newLockFile() lockFile { return lockFile{} }

func (l *lockFile) lock(path string) (opened int, err error) {
	if l.fl == nil {
		l.fl = flock.New(path, flock.SetPermissions(0o644))
	}
	return 0, l.fl.Lock()
}

func (l *lockFile) unlock() (closed int) {
	_ = l.fl.Unlock()
	return 0
}

func (l *lockFile) close() int { return 0 }

// writeNew writes data to path, created or truncated, and stamps it with a
// modification time no other version written by this process has.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := Open(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	t := uniqueStamp()
	return os.Chtimes(path, t, t)
}

// sameFile is not called here (no entry locks itself).
func (h *heldFiles) sameFile(FileID) bool { return false }

// IDOf is the zero FileID here: files are not told apart (SameFile says yes).
func IDOf(fs.FileInfo) FileID { return FileID{} }
