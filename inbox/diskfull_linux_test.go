package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/statefile"
)

// smallDisk mounts a 2 MiB tmpfs for the test and returns its path; it skips
// where mounting is not allowed.
func smallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		statefile.CloseKept(dir) // the lock table keeps descriptors open in there
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file until the disk is full and returns its path;
// removing it frees the space again.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	err := os.WriteFile(path, make([]byte, 4<<20), 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v, want ENOSPC", err)
	}
	return path
}

// noPanic runs fn and turns a panic into a test failure.
func noPanic(t *testing.T, what string, fn func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked on a full disk: %v", what, r)
		}
	}()
	return fn()
}

func wantENOSPC(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("%s on a full disk: %v, want an error wrapping ENOSPC", what, err)
		return
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("%s: error %q does not name %s", what, err, path)
	}
}

// On a full disk every write is an error wrapping ENOSPC that names the
// file, nothing panics, no temp file is left, and what was written before
// is intact: it reads back, and later lines do not glue onto a torn one.
// (The state-file helpers have the same test in internal/statefile.)
func TestFullDiskIsAnErrorAndLosesNothing(t *testing.T) {
	disk := smallDisk(t)
	st := NewStore(filepath.Join(disk, "inbox"))
	defer st.Close()
	mustAppend(t, st, "alice", "one")
	mustAppend(t, st, "alice", "two")
	filler := fillDisk(t, disk)

	// Bigger than a page, so the write needs space the disk does not have.
	big := strings.Repeat("x", 64<<10)
	err := noPanic(t, "Append", func() error { _, err := st.Append("alice", testMsg(big)); return err })
	wantENOSPC(t, "Append", err, st.Path("alice"))
	err = noPanic(t, "Commit", func() error { return st.Commit("alice", mustRead(t, st, "alice")) })
	wantENOSPC(t, "Commit", err, st.cursorPath("alice"))

	entries, _ := os.ReadDir(disk)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
	b := mustRead(t, st, "alice")
	assertContents(t, b, "one", "two")
	if len(b.Bad) != 0 {
		t.Errorf("bad lines after the full disk: %+v", b.Bad)
	}

	// Space again: writing resumes cleanly after the lines written before.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "alice", "three")
	b = mustRead(t, st, "alice")
	assertContents(t, b, "one", "two", "three")
	if len(b.Bad) != 0 {
		t.Errorf("bad lines after space came back: %+v", b.Bad)
	}
	if err := st.Commit("alice", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "alice"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
}
