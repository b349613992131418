package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// A cloned repository can ship .agentteam/ with links in it: an inbox that
// is a link to ~/.bashrc is neither written nor read through.
func TestSymlinkedInboxIsRefused(t *testing.T) {
	st := newTestStore(t)
	outside, unchanged := outsideFile(t)
	symlink(t, outside, st.Path("alice"))

	_, err := st.Append(t.Context(), "alice", testMsg("echo pwned"))
	wantLinkRefused(t, "Append", err, st.Path("alice"))
	_, err = st.ReadUnread(t.Context(), "alice")
	wantLinkRefused(t, "ReadUnread", err, st.Path("alice"))
	_, _, err = st.ReadAll(t.Context(), "alice")
	wantLinkRefused(t, "ReadAll", err, st.Path("alice"))
	_, err = st.HasUnread(t.Context(), "alice")
	wantLinkRefused(t, "HasUnread", err, st.Path("alice"))
	unchanged()
}

// A link to a file that does not exist yet would be created by the first write.
func TestDanglingSymlinkedInboxIsNotCreated(t *testing.T) {
	st := newTestStore(t)
	target := filepath.Join(t.TempDir(), "created-outside")
	symlink(t, target, st.Path("alice"))
	_, err := st.Append(t.Context(), "alice", testMsg("hi"))
	wantLinkRefused(t, "Append", err, st.Path("alice"))
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Append created %s through the link: %v", target, err)
	}
}

// An earlier version's lock file beside a log is never opened now: a link
// there (a dangling one would have been created through) is left alone,
// nothing is made through it, and appends and commits work.
func TestOldLockFileSymlinkIsNotFollowed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an inbox's lock is still NAME.jsonl.lock there")
	}
	st := newTestStore(t)
	target := filepath.Join(t.TempDir(), "created-outside")
	symlink(t, target, st.Path("alice")+".lock")
	mustAppend(t, st, "alice", "hi")
	if err := st.Commit(t.Context(), "alice", mustRead(t, st, "alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("locking created %s through the link: %v", target, err)
	}
	if b := mustRead(t, st, "alice"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
}

// Stats, used by read-only commands, reports a linked or directory inbox as
// broken in a sentence naming it, and reads nothing through the link.
func TestStatsReportsABrokenInbox(t *testing.T) {
	st := newTestStore(t)
	outside, unchanged := outsideFile(t)
	symlink(t, outside, st.Path("alice"))
	if err := os.Mkdir(st.Path("bob"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"alice": st.Path("alice") + " is a symbolic link; agentteam keeps its state only in real files: remove it",
		"bob":   st.Path("bob") + " is a directory; agentteam keeps its state only in regular files: move it away",
	} {
		if s, err := st.Stats(t.Context(), name); err != nil || s != (Stats{Broken: want}) {
			t.Errorf("Stats(%s) = %+v, %v; want broken: %s", name, s, err, want)
		}
	}
	unchanged()
}

// Names lists an inbox that is a link or a directory too, so that a listing
// can show it as broken (Stats.Broken) instead of leaving it out; read
// positions, lock files and what a repair set aside are no inboxes.
func TestNamesListsBrokenInboxes(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "carol", "hi")
	if err := st.Commit(t.Context(), "carol", mustRead(t, st, "carol")); err != nil {
		t.Fatal(err)
	}
	outside, unchanged := outsideFile(t)
	symlink(t, outside, st.Path("alice"))
	if err := os.Mkdir(st.Path("bob"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, st.positions.cursorPath("carol")+".corrupt-20260101T000000.000000000Z", "x")
	names, err := st.Names(t.Context())
	if err != nil || strings.Join(names, " ") != "alice bob carol" {
		t.Errorf("Names = %v, %v; want alice bob carol", names, err)
	}
	for _, n := range names {
		s, err := st.Stats(t.Context(), n)
		if err != nil || (s.Broken != "") != (n != "carol") {
			t.Errorf("Stats(%s) = %+v, %v", n, s, err)
		}
	}
	unchanged()
}

// outsideFile, symlink and wantLinkRefused are the shared attack helpers.
var outsideFile, symlink = testfs.OutsideFile, testfs.Symlink

func wantLinkRefused(t *testing.T, what string, err error, path string) {
	t.Helper()
	testfs.WantLinkRefused(t, what, err, statefile.ErrSymlink, path)
}
