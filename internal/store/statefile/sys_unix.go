//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package statefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// oNoFollow makes open(2) refuse a symbolic link at the last component.
const oNoFollow = syscall.O_NOFOLLOW

// selfLocking: HoldLog flocks the log itself.
const selfLocking = true

type fileID = FileID

func idOf(st *syscall.Stat_t) fileID { return fileID{uint64(st.Dev), uint64(st.Ino)} }

// IDOf is the identity of the file fi describes (from a stat or an lstat).
func IDOf(fi fs.FileInfo) FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return idOf(st)
	}
	return FileID{}
}

// heldFiles are the descriptors kept open for one locked path between
// calls: the path's own, for appends (O_APPEND puts every write at the
// current end, whoever wrote before), and a record file the lock guards
// (an inbox's read position). Raw syscalls on purpose: os.OpenFile
// registers a regular file with the poller, five more syscalls per open.
type heldFiles struct {
	appendFD int // -1 when closed; for a log locked on itself, the flocked descriptor
	appendID fileID
	recordFD int // -1 when closed
	recordID fileID
}

func newHeldFiles() heldFiles { return heldFiles{appendFD: -1, recordFD: -1} }

// unlock has nothing to release: descriptors stay open for the next call.
func (h *heldFiles) unlock() (closed int) { return 0 }

// appendLine writes line at the end of path in one write(2); the caller
// holds path's lock. self says the lock is the append descriptor's own
// flock (HoldLog), which checked that path names it. It returns how many
// descriptors it opened (or, when negative, closed).
func (h *heldFiles) appendLine(path string, line []byte, self bool) (opened int, err error) {
	if self {
		return 0, h.appendLocked(path, line)
	}
	if h.appendFD >= 0 {
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) != nil || idOf(&st) != h.appendID {
			opened -= h.closeAppend() // removed or replaced: write to what the path names now
		}
	}
	if h.appendFD < 0 {
		fd, id, err := openID(path, syscall.O_APPEND|syscall.O_CREAT|syscall.O_WRONLY, 0o644)
		if err != nil {
			return opened, err
		}
		h.appendFD, h.appendID = fd, id
		opened++
	}
	if err := h.appendLocked(path, line); err != nil {
		opened -= h.closeAppend() // start from a fresh descriptor next time
		return opened, err
	}
	return opened, nil
}

// appendLocked writes line through the open append descriptor, in one
// write(2) in all but a short write, which writes the rest or learns why
// not (a full disk: ENOSPC). A torn tail is cut off again.
func (h *heldFiles) appendLocked(path string, line []byte) error {
	written, err := writeAll(h.appendFD, line)
	if err != nil && written > 0 {
		// A torn tail would glue itself to the next line; the caller holds the
		// lock, so cutting our own bytes off again is safe.
		var st syscall.Stat_t
		if syscall.Fstat(h.appendFD, &st) == nil {
			_ = syscall.Ftruncate(h.appendFD, st.Size-int64(written))
		}
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// lockSelf takes the flock of the log path on its own append descriptor,
// opening it (and, with create, making the log) when it is not open. A
// log removed or replaced since is noticed once the flock is held (the
// path names another file, or none) and locked anew, as lockFile.lock does.
func (h *heldFiles) lockSelf(path string, create bool) (opened int, err error) {
	flag := syscall.O_APPEND | syscall.O_WRONLY
	if create {
		flag |= syscall.O_CREAT
	}
	for range 100 {
		if h.appendFD < 0 {
			fd, id, err := openID(path, flag, 0o644)
			if err != nil {
				return opened, err
			}
			h.appendFD, h.appendID = fd, id
			opened++
		}
		if err := retryEINTR(func() error { return syscall.Flock(h.appendFD, syscall.LOCK_EX) }); err != nil {
			opened -= h.closeAppend()
			return opened, &fs.PathError{Op: "flock", Path: path, Err: err}
		}
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) == nil && idOf(&st) == h.appendID {
			return opened, nil
		}
		opened -= h.closeAppend() // closing releases the flock
	}
	return opened, &fs.PathError{Op: "lock", Path: path, Err: errors.New("the file keeps being replaced")}
}

// unlockSelf releases a log's own flock; the descriptor stays open for the
// next hold. If the release fails, the descriptor is closed, which
// releases it too.
func (h *heldFiles) unlockSelf() (closed int) {
	if h.appendFD < 0 {
		return 0
	}
	if syscall.Flock(h.appendFD, syscall.LOCK_UN) != nil {
		return h.closeAppend()
	}
	return 0
}

// sameFile reports whether id is the file of the held append descriptor.
func (h *heldFiles) sameFile(id FileID) bool { return h.appendFD >= 0 && id == h.appendID }

func (h *heldFiles) attr(path, name string, buf []byte) (int, error) {
	if h.appendFD < 0 {
		return 0, &fs.PathError{Op: "getxattr", Path: path, Err: errNotHeld}
	}
	return fdAttr(h.appendFD, path, name, buf)
}

func (h *heldFiles) setAttr(path, name string, value []byte) error {
	if h.appendFD < 0 {
		return &fs.PathError{Op: "setxattr", Path: path, Err: errNotHeld}
	}
	return fdSetAttr(h.appendFD, path, name, value)
}

func (h *heldFiles) removeAttr(path, name string) error {
	if h.appendFD < 0 {
		return &fs.PathError{Op: "removexattr", Path: path, Err: errNotHeld}
	}
	return fdRemoveAttr(h.appendFD, path, name)
}

// writeRecord writes rec, a record of fixed length, over path in place:
// no new file per write. A file of another length (an earlier version's
// format) is replaced whole once instead, so no reader sees a mix of two.
// The caller holds the lock that guards path.
func (h *heldFiles) writeRecord(path string, rec []byte) (opened int, err error) {
	if h.recordFD >= 0 {
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) != nil || idOf(&st) != h.recordID || st.Size != int64(len(rec)) {
			opened -= h.closeRecord()
		}
	}
	if h.recordFD < 0 {
		fd, err := openFD(path, syscall.O_CREAT|syscall.O_WRONLY, 0o644)
		if err != nil {
			return opened, err
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			_ = syscall.Close(fd)
			return opened, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		if err := checkRegularStat(path, &st); err != nil {
			_ = syscall.Close(fd)
			return opened, err
		}
		if st.Size != 0 && st.Size != int64(len(rec)) {
			_ = syscall.Close(fd)
			return opened, ReplaceFile(path, rec, 0o644)
		}
		h.recordFD, h.recordID = fd, idOf(&st)
		opened++
	}
	for off := 0; off < len(rec); {
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Pwrite(h.recordFD, rec[off:], int64(off))
			return err
		})
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			opened -= h.closeRecord()
			return opened, &fs.PathError{Op: "write", Path: path, Err: err}
		}
		off += n
	}
	// A time of its own, so that size and mtime still tell versions apart.
	ts := syscall.NsecToTimespec(uniqueStamp().UnixNano())
	if err := syscall.UtimesNano(path, []syscall.Timespec{ts, ts}); err != nil {
		return opened, &fs.PathError{Op: "utimes", Path: path, Err: err}
	}
	return opened, nil
}

// lockFile is a lock file (path+".lock") kept open between holds, so that
// a lock costs a flock(2) and an lstat(2) instead of an open, a flock and a
// close each time. The entry's mutex guards it.
type lockFile struct {
	fd int // -1 when closed
	id fileID
}

func newLockFile() lockFile { return lockFile{fd: -1} }

// lock takes the flock of the lock file path, opening (and creating) it
// when it is not open. A lock file removed or replaced since it was opened
// is noticed after the flock is taken (the path names another file, or
// none) and the lock is taken again on what the path names now, so the lock
// always excludes whoever opens the path, as a fresh open would. It
// returns how many descriptors it opened (or, when negative, closed).
func (l *lockFile) lock(path string) (opened int, err error) {
	for range 100 {
		if l.fd < 0 {
			fd, id, err := openID(path, syscall.O_CREAT|syscall.O_RDONLY, 0o644)
			if err != nil {
				return opened, err
			}
			l.fd, l.id = fd, id
			opened++
		}
		if err := retryEINTR(func() error { return syscall.Flock(l.fd, syscall.LOCK_EX) }); err != nil {
			opened -= l.close()
			return opened, &fs.PathError{Op: "flock", Path: path, Err: err}
		}
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) == nil && idOf(&st) == l.id {
			return opened, nil
		}
		opened -= l.close() // closing releases the flock
	}
	return opened, &fs.PathError{Op: "lock", Path: path, Err: errors.New("the lock file keeps being replaced")}
}

// unlock releases the flock; the descriptor stays open for the next lock.
// If the release fails, the descriptor is closed, which releases it too.
func (l *lockFile) unlock() (closed int) {
	if l.fd < 0 {
		return 0
	}
	if syscall.Flock(l.fd, syscall.LOCK_UN) != nil {
		return l.close()
	}
	return 0
}

// close closes the descriptor if open (releasing any flock on it) and
// returns 1 if it was open.
func (l *lockFile) close() int { return closeFD(&l.fd) }

// close closes every descriptor and returns how many were open.
func (h *heldFiles) close() int { return h.closeAppend() + h.closeRecord() }

func (h *heldFiles) closeRecord() int { return closeFD(&h.recordFD) }

func (h *heldFiles) closeAppend() int { return closeFD(&h.appendFD) }

// closeFD closes *fd if it is open, marks it closed and returns 1 if it was.
func closeFD(fd *int) int {
	if *fd < 0 {
		return 0
	}
	_ = syscall.Close(*fd)
	*fd = -1
	return 1
}

// openID opens path close-on-exec and returns the descriptor with the
// identity of the file it names, which must be a regular file.
func openID(path string, flag int, perm uint32) (int, fileID, error) {
	fd, err := openFD(path, flag, perm)
	if err != nil {
		return -1, fileID{}, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return -1, fileID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := checkRegularStat(path, &st); err != nil {
		_ = syscall.Close(fd)
		return -1, fileID{}, err
	}
	return fd, idOf(&st), nil
}

// checkRegularStat refuses what an open found at path unless it is a
// regular file (a FIFO, a device, a directory).
func checkRegularStat(path string, st *syscall.Stat_t) error {
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		return nil
	}
	return &NotRegularError{path, modeOf(st)}
}

// modeOf is the type bits of st as an fs.FileMode.
func modeOf(st *syscall.Stat_t) fs.FileMode {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// openFD opens path close-on-exec with a raw open(2). Every file opened
// here is a state file: a symbolic link is refused (O_NOFOLLOW), not followed.
// openFile is os.OpenFile without the poller's part: open(2), then
// os.NewFile, which leaves a regular file out of the poller (os.OpenFile
// tries to register it: five more syscalls for every open of a state file).
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := openFD(path, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	// Blocking again, as os.File expects of a file it does not poll (the
	// caller refuses what is not a regular file before any read).
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, uintptr(flag&syscall.O_APPEND)); e != 0 {
		_ = syscall.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: e}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openFD opens with O_NONBLOCK too, so that a FIFO at a state file's path
// is refused (by the caller's check of what it opened, or ENXIO when it
// has no reader) instead of blocking the open until a peer comes; on a
// regular file the flag changes nothing.
func openFD(path string, flag int, perm uint32) (int, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, flag|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
		return err
	})
	if err != nil {
		return -1, linkRefusal(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return fd, nil
}

// writeAll writes data to fd, looping over short writes, and returns how
// many bytes it wrote; a failed write(2) returns -1, never a count to use.
func writeAll(fd int, data []byte) (written int, err error) {
	for written < len(data) {
		var n int
		err = retryEINTR(func() (err error) {
			n, err = syscall.Write(fd, data[written:])
			return err
		})
		if err != nil {
			return written, err
		}
		if n <= 0 {
			return written, io.ErrShortWrite
		}
		written += n
	}
	return written, nil
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// writeNew writes data to path, created or truncated, and stamps it with a
// modification time no other version written by this process has.
func writeNew(path string, data []byte, perm os.FileMode) error {
	fd, err := openFD(path, syscall.O_CREAT|syscall.O_TRUNC|syscall.O_WRONLY, uint32(perm.Perm()))
	if err != nil {
		return err
	}
	_, err = writeAll(fd, data)
	if err == nil {
		ts := syscall.NsecToTimespec(uniqueStamp().UnixNano())
		err = syscall.UtimesNano(path, []syscall.Timespec{ts, ts})
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}
