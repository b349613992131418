package testfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size (like "2m") for the test and returns its
// path; it skips where mounting is not allowed. beforeUnmount, if set, runs
// first at cleanup (to close descriptors kept open in there).
func SmallDisk(t testing.TB, size string, beforeUnmount func(dir string)) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if beforeUnmount != nil {
			beforeUnmount(dir)
		}
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// FillDisk writes a file until the disk is full and returns its path;
// removing it frees the space again.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	err := os.WriteFile(path, make([]byte, 4<<20), 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v, want ENOSPC", err)
	}
	return path
}

// WantENOSPC checks that err wraps ENOSPC and names path.
func WantENOSPC(t testing.TB, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("%s on a full disk: %v, want an error wrapping ENOSPC", what, err)
		return
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("%s: error %q does not name %s", what, err, path)
	}
}
