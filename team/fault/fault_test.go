package fault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

func TestAsStorageErrorNamesTheFileATempReplaces(t *testing.T) {
	err := fmt.Errorf("write: %w", &fs.PathError{Op: "write", Path: "/w/.agentteam/team/config.json.tmp", Err: syscall.ENOSPC})
	se, ok := AsStorageError(err).(*StorageError)
	if !ok {
		t.Fatalf("AsStorageError(%v) = %T, want *StorageError", err, AsStorageError(err))
	}
	if se.Path != "/w/.agentteam/team/config.json" || !errors.Is(se, syscall.ENOSPC) {
		t.Errorf("StorageError = %+v, want the file it replaces and ENOSPC", se)
	}
	other := errors.New("permission denied")
	if AsStorageError(other) != other || IsStorage(other) {
		t.Errorf("an error that is not the disk's came back as %v", AsStorageError(other))
	}
	if !IsStorage(syscall.EROFS) {
		t.Error("EROFS is not a storage error")
	}
}

func TestLatchKeepsAndTellsTheFirstFault(t *testing.T) {
	var told []error
	stops := 0
	l := NewLatch(nil, func(err error) { told = append(told, err) }, func() { stops++ })
	l.CheckStorage(errors.New("not the disk's"))
	if l.Err() != nil {
		t.Fatalf("a write error not of the disk halted the team: %v", l.Err())
	}
	first := errors.New("budget spent")
	l.Halt(first)
	l.CheckStorage(syscall.ENOSPC)
	select {
	case <-l.Halted():
	default:
		t.Fatal("Halted is not closed after a halt")
	}
	if l.Err() != first || len(told) != 1 || stops != 1 {
		t.Errorf("Err = %v, told %v, stopped %d times; want the first, told and stopped once", l.Err(), told, stops)
	}
	if l.Fence() != nil {
		t.Errorf("a team halted by its budget fences its writes: %v", l.Fence())
	}
}

func TestLatchFencesOnceTheOwnerLockIsLost(t *testing.T) {
	lost := make(chan struct{})
	l := NewLatch(lost, func(error) {}, func() {})
	if err := l.Fence(); err != nil {
		t.Fatalf("Fence before the loss: %v", err)
	}
	close(lost)
	if err := l.Fence(); !errors.Is(err, ErrOwnerLost) {
		t.Errorf("Fence after the loss = %v, want ErrOwnerLost", err)
	}
	l.WatchOwner(context.Background())
	if !errors.Is(l.Err(), ErrOwnerLost) {
		t.Errorf("Err after WatchOwner saw the loss = %v, want ErrOwnerLost", l.Err())
	}
}
