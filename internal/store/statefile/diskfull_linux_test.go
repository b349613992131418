package statefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// On a full disk every write is an error wrapping ENOSPC that names the
// file, nothing panics, no temp file is left, and what was written before
// is intact: it reads back, and later lines do not glue onto a torn one.
// (An inbox's log and read position have the same test in inbox.)
func TestFullDiskIsAnErrorAndLosesNothing(t *testing.T) {
	disk := testfs.SmallDisk(t, "2m", CloseKept)
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
	filler := testfs.FillDisk(t, disk)

	// Bigger than a page, so the write needs space the disk does not have.
	big := strings.Repeat("x", 64<<10)
	err := testfs.NoPanic(t, "AppendLine", func() error { return AppendLine(events, []byte(big)) })
	testfs.WantENOSPC(t, "AppendLine", err, events)
	err = testfs.NoPanic(t, "WriteFileAtomic", func() error { return WriteFileAtomic(registry, []byte(big), 0o644) })
	testfs.WantENOSPC(t, "WriteFileAtomic", err, registry)
	err = testfs.NoPanic(t, "ReplaceFile", func() error { return ReplaceFile(status, []byte(big), 0o644) })
	testfs.WantENOSPC(t, "ReplaceFile", err, status)

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
