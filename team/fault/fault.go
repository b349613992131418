// Package fault is what stops a team for good: a disk that takes no more
// writes, the owner lock lost, a budget spent. A Latch keeps the first such
// error, tells it once and stops the team; the writes of a lead's process
// that no longer runs the team are refused by its Fence.
package fault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"
)

// StorageError is a write that failed because the disk cannot take more:
// full, over quota, or read-only. Every later write would fail the same
// way, so the team stops instead of going on half-recorded.
type StorageError struct {
	Path string // the file being written, as given by the failed call
	Err  error  // the cause: ENOSPC, EDQUOT or EROFS
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("%v while writing %s: free some space, then go on with --resume (what was written before is kept)",
		e.Err, e.Path)
}

func (e *StorageError) Unwrap() error { return e.Err }

// AsStorageError returns err as a *StorageError when its cause is a full or
// read-only disk, and err unchanged otherwise.
func AsStorageError(err error) error {
	var se *StorageError
	if err == nil || errors.As(err, &se) {
		return err
	}
	var cause error
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		if errors.Is(err, errno) {
			cause = errno
			break
		}
	}
	if cause == nil {
		return err
	}
	path := "agentteam's files"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		path = strings.TrimSuffix(pe.Path, ".tmp") // ReplaceFile's temp: name the file it replaces
	}
	return &StorageError{Path: path, Err: cause}
}

// IsStorage reports whether err is a write the disk could not take.
func IsStorage(err error) bool {
	_, ok := AsStorageError(err).(*StorageError)
	return ok
}

// ErrOwnerLost is the fault of a team whose owner lock was lost while it
// ran (a lease on a NATS server not refreshed in time): it stops, since
// another process may now run the team.
var ErrOwnerLost = errors.New("this process lost the team's owner lock (its lease on the store was not refreshed in time, or was taken): it stops so that two processes do not run the team at once; go on with --resume")

// Latch keeps the first fault of a team.
type Latch struct {
	fault     atomic.Pointer[error]
	halted    chan struct{}
	ownerLost <-chan struct{} // nil: never lost
	tell      func(error)
	stop      func()
}

// NewLatch is the latch of a team that tell tells of its fault and stop
// stops; ownerLost is closed when its owner lock is lost (nil: never).
func NewLatch(ownerLost <-chan struct{}, tell func(error), stop func()) *Latch {
	return &Latch{halted: make(chan struct{}), ownerLost: ownerLost, tell: tell, stop: stop}
}

// Halt stops the team for good because of err: it records it for Err,
// tells it, and stops every agent at its next step. Only the first is told.
func (l *Latch) Halt(err error) {
	if !l.fault.CompareAndSwap(nil, &err) {
		return // told once
	}
	l.tell(err)
	close(l.halted)
	l.stop()
}

// CheckStorage halts the team at the first write that failed for lack of
// space, so nothing waits on a disk that cannot take the write.
func (l *Latch) CheckStorage(err error) {
	if se, ok := AsStorageError(err).(*StorageError); ok {
		l.Halt(se)
	}
}

// WatchOwner halts the team if its owner lock is lost before ctx ends.
func (l *Latch) WatchOwner(ctx context.Context) {
	if l.ownerLost == nil {
		return
	}
	select {
	case <-l.ownerLost:
		l.Halt(ErrOwnerLost)
	case <-ctx.Done():
	}
}

// Fence refuses the writes of a lead's process that no longer runs the
// team: its owner lock lost, or a message of its lead refused by the store
// because another process claimed the lead's sending. Checked before each
// write, it bounds what a halt still running lets through.
func (l *Latch) Fence() error {
	if p := l.fault.Load(); p != nil && errors.Is(*p, ErrOwnerLost) {
		return ErrOwnerLost
	}
	select {
	case <-l.ownerLost:
		return ErrOwnerLost
	default:
		return nil
	}
}

// Halted is closed once a fault stopped the team.
func (l *Latch) Halted() <-chan struct{} { return l.halted }

// Err is the error that stopped the team, or nil.
func (l *Latch) Err() error {
	if p := l.fault.Load(); p != nil {
		return *p
	}
	return nil
}
