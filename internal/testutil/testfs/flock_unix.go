//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package testfs

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TryFlock reports whether a fresh open of path can take its flock now,
// as another process would: a lock held elsewhere makes it fail.
func TryFlock(t testing.TB, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
