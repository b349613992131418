package team

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
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

// checkStorage stops the team at the first write that failed for lack of
// space: it records the fault, tells the subscriber, and stops the team,
// so every agent stops at its next step and nothing waits on a disk that
// cannot take the write.
func (t *Team) checkStorage(err error) {
	se, ok := AsStorageError(err).(*StorageError)
	if !ok {
		return
	}
	if !t.fault.CompareAndSwap(nil, se) {
		return // told once
	}
	t.events.Notify(Event{Payload: Failure{Class: ClassStorage, Text: se.Error()}})
	close(t.halted)
	t.stopping.stop()
}

// Fault is the storage error that stopped the team, or nil.
func (t *Team) Fault() error {
	if se := t.fault.Load(); se != nil {
		return se
	}
	return nil
}
