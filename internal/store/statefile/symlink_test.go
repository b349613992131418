package statefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// events.jsonl is written through AppendLine.
func TestAppendLineRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	outside, unchanged := outsideFile(t)
	events := filepath.Join(dir, "events.jsonl")
	symlink(t, outside, events)
	wantLinkRefused(t, "AppendLine", AppendLine(events, []byte(`{"kind":"spawn"}`)), events)
	unchanged()
}

// ReplaceFile's fixed temp name is opened with O_TRUNC: a link there would
// empty the file it points to. The link is refused, then cleared away.
func TestReplaceFileRefusesSymlinkedTemp(t *testing.T) {
	dir := t.TempDir()
	outside, unchanged := outsideFile(t)
	path := filepath.Join(dir, "status.json")
	symlink(t, outside, path+".tmp")
	wantLinkRefused(t, "ReplaceFile", ReplaceFile(path, []byte("{}"), 0o644), path+".tmp")
	unchanged()
	if err := ReplaceFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatalf("ReplaceFile after the link was cleared: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{}" {
		t.Errorf("%s = %q", path, got)
	}
}

// Open is the same refusal for state files kept by other packages
// (an agent's session).
func TestOpenRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	outside, unchanged := outsideFile(t)
	path := filepath.Join(dir, "alice.jsonl")
	symlink(t, outside, path)
	for _, flag := range []int{os.O_RDONLY, os.O_APPEND | os.O_CREATE | os.O_WRONLY} {
		f, err := Open(path, flag, 0o644)
		if f != nil {
			f.Close()
		}
		wantLinkRefused(t, "Open", err, path)
	}
	unchanged()
	// A directory is no state file either.
	if err := os.Mkdir(filepath.Join(dir, "bob.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "bob.jsonl"), os.O_RDONLY, 0); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(dir, "bob.jsonl")+" is a directory") {
		t.Errorf("Open of a directory: %v", err)
	}
}

// outsideFile, symlink and wantLinkRefused are the shared attack helpers.
var outsideFile, symlink = testfs.OutsideFile, testfs.Symlink

func wantLinkRefused(t *testing.T, what string, err error, path string) {
	t.Helper()
	testfs.WantLinkRefused(t, what, err, ErrSymlink, path)
}
