//go:build unix

package testkit

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// BoundedOnFIFO runs fn and fails the test if it has not returned within
// 5s; it then opens the FIFO for writing, so the stuck read (and the test)
// ends.
func BoundedOnFIFO[T any](t testing.TB, fifo string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("a call on the FIFO %s did not end within 5s: it waits on it", fifo)
		var zero T
		return zero
	}
}
