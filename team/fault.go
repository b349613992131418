package team

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/models"
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

// checkStorage stops the team at the first write that failed for lack of
// space: it records the fault, tells the subscriber, and stops the team,
// so every agent stops at its next step and nothing waits on a disk that
// cannot take the write.
func (t *Team) checkStorage(err error) {
	se, ok := AsStorageError(err).(*StorageError)
	if !ok {
		return
	}
	t.halt(se)
}

// halt stops the team for good because of err (a full disk, the owner
// lock lost): it records it for Fault, tells the subscriber, and stops
// every agent at its next step. Only the first is told.
func (t *Team) halt(err error) {
	if !t.fault.CompareAndSwap(nil, &err) {
		return // told once
	}
	class := event.ClassStorage
	if errors.As(err, new(*models.BudgetError)) {
		class = event.ClassBudget
	}
	t.events.Notify(event.Event{Payload: event.Failure{Class: class, Text: err.Error()}})
	close(t.halted)
	t.stop()
}

// ErrOwnerLost is the fault of a team whose owner lock was lost while it
// ran (a lease on a NATS server not refreshed in time): it stops, since
// another process may now run the team.
var ErrOwnerLost = errors.New("this process lost the team's owner lock (its lease on the store was not refreshed in time, or was taken): it stops so that two processes do not run the team at once; go on with --resume")

// watchOwner halts the team if its owner lock is lost before the team stops.
func (t *Team) watchOwner(lost <-chan struct{}) {
	defer t.wg.Done()
	select {
	case <-lost:
		t.halt(ErrOwnerLost)
	case <-t.root.Done():
	}
}

// ownerFence refuses the writes of a lead's process that no longer runs
// the team: its owner lock lost, or a message of its lead refused by the
// store because another process claimed the lead's sending. Checked
// before each write here, it bounds what a halt still running lets
// through; the store refuses the lead's messages by itself (appendLead).
func (t *Team) ownerFence() error {
	if p := t.fault.Load(); p != nil && errors.Is(*p, ErrOwnerLost) {
		return ErrOwnerLost
	}
	select {
	case <-t.ownerLost:
		return ErrOwnerLost
	default:
		return nil
	}
}

// Halted is closed once a fault stopped the team (Fault says which).
func (t *Team) Halted() <-chan struct{} { return t.halted }

// Fault is the error that stopped the team (a full disk, the owner lock
// lost), or nil.
func (t *Team) Fault() error {
	if p := t.fault.Load(); p != nil {
		return *p
	}
	return nil
}
