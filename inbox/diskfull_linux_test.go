package inbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// On a full disk every write is an error wrapping ENOSPC that names the
// file, nothing panics, no temp file is left, and what was written before
// is intact: it reads back, and later lines do not glue onto a torn one.
// (The state-file helpers have the same test in internal/store/statefile.)
// Where the position is the log's attribute, a commit may need no space at
// all (tmpfs and ext4 keep a small attribute in the inode): then it
// succeeds and the position moves; if it fails, it is ENOSPC naming the
// log and the position has not moved.
func TestFullDiskIsAnErrorAndLosesNothing(t *testing.T) {
	t.Run("attribute", func(t *testing.T) { fullDisk(t, false) })
	t.Run("file", func(t *testing.T) { fullDisk(t, true) })
}

func fullDisk(t *testing.T, fileCursors bool) {
	disk := testfs.SmallDisk(t, "2m", statefile.CloseKept)
	st := NewStore(filepath.Join(disk, "inbox"))
	st.positions.fileCursors = fileCursors
	defer st.Close()
	mustAppend(t, st, "alice", "one")
	mustAppend(t, st, "alice", "two")
	filler := testfs.FillDisk(t, disk)

	// Bigger than a page, so the write needs space the disk does not have.
	big := strings.Repeat("x", 64<<10)
	err := testfs.NoPanic(t, "Append", func() error { _, err := st.Append(t.Context(), "alice", testMsg(big)); return err })
	testfs.WantENOSPC(t, "Append", err, st.Path("alice"))
	err = testfs.NoPanic(t, "Commit", func() error { return st.Commit(t.Context(), "alice", mustRead(t, st, "alice")) })
	committed := false
	if fileCursors {
		testfs.WantENOSPC(t, "Commit", err, st.positions.cursorPath("alice"))
	} else if err != nil {
		testfs.WantENOSPC(t, "Commit", err, st.Path("alice"))
	} else {
		committed = true
	}

	entries, _ := os.ReadDir(disk)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
	b := mustRead(t, st, "alice")
	if committed {
		assertContents(t, b)
	} else {
		assertContents(t, b, "one", "two")
	}
	if len(b.Bad) != 0 {
		t.Errorf("bad lines after the full disk: %+v", b.Bad)
	}

	// Space again: writing resumes cleanly after the lines written before.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "alice", "three")
	b = mustRead(t, st, "alice")
	if committed {
		assertContents(t, b, "three")
	} else {
		assertContents(t, b, "one", "two", "three")
	}
	if len(b.Bad) != 0 {
		t.Errorf("bad lines after space came back: %+v", b.Bad)
	}
	if err := st.Commit(t.Context(), "alice", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "alice"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
}
