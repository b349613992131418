package statefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
		CloseKept(dir) // the lock table keeps descriptors open in there
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
// (An inbox's log and read position have the same test in inbox.)
func TestFullDiskIsAnErrorAndLosesNothing(t *testing.T) {
	disk := smallDisk(t)
	events := filepath.Join(disk, "events.jsonl")
	if err := AppendLine(events, []byte(`{"kind":"spawn"}`)); err != nil {
		t.Fatal(err)
	}
	registry := filepath.Join(disk, "config.json")
	if err := WriteFileAtomic(registry, []byte(`{"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(disk, "status.json")
	if err := ReplaceFile(status, []byte(`{"status":"idle"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, disk)

	// Bigger than a page, so the write needs space the disk does not have.
	big := strings.Repeat("x", 64<<10)
	err := noPanic(t, "AppendLine", func() error { return AppendLine(events, []byte(big)) })
	wantENOSPC(t, "AppendLine", err, events)
	err = noPanic(t, "WriteFileAtomic", func() error { return WriteFileAtomic(registry, []byte(big), 0o644) })
	wantENOSPC(t, "WriteFileAtomic", err, registry)
	err = noPanic(t, "ReplaceFile", func() error { return ReplaceFile(status, []byte(big), 0o644) })
	wantENOSPC(t, "ReplaceFile", err, status)

	entries, _ := os.ReadDir(disk)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
	for path, want := range map[string]string{
		events:   `{"kind":"spawn"}` + "\n",
		registry: `{"version":1}`,
		status:   `{"status":"idle"}`,
	} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s after the full disk = %q, %v; want %q", path, got, err, want)
		}
	}

	// Space again: writing resumes cleanly after the lines written before.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := AppendLine(events, []byte(`{"kind":"status"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(events); string(got) != `{"kind":"spawn"}`+"\n"+`{"kind":"status"}`+"\n" {
		t.Errorf("events after space came back = %q", got)
	}
}
