package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/statefile"
)

// outsideFile is a file outside the workspace, as ~/.bashrc would be; the
// returned check fails the test unless it is byte-for-byte unchanged.
func outsideFile(t *testing.T) (path string, unchanged func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), ".bashrc")
	const content = "export PATH=$HOME/bin:$PATH\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Errorf("the file outside was changed: %q, %v", got, err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// wantLinkRefused checks that err refuses path as a symbolic link, in a sentence naming it.
func wantLinkRefused(t *testing.T, what string, err error, path string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s through a symbolic link %s succeeded", what, path)
		return
	}
	if !errors.Is(err, statefile.ErrSymlink) || !strings.Contains(err.Error(), path+" is a symbolic link") {
		t.Errorf("%s: error %q, want one saying %s is a symbolic link", what, err, path)
	}
}

// A cloned repository can ship .agentteam/ with links in it: an inbox that
// is a link to ~/.bashrc is neither written nor read through.
func TestSymlinkedInboxIsRefused(t *testing.T) {
	st := newTestStore(t)
	outside, unchanged := outsideFile(t)
	symlink(t, outside, st.Path("alice"))

	_, err := st.Append("alice", testMsg("echo pwned"))
	wantLinkRefused(t, "Append", err, st.Path("alice"))
	_, err = st.ReadUnread("alice")
	wantLinkRefused(t, "ReadUnread", err, st.Path("alice"))
	_, _, err = st.ReadAll("alice")
	wantLinkRefused(t, "ReadAll", err, st.Path("alice"))
	_, err = st.HasUnread("alice")
	wantLinkRefused(t, "HasUnread", err, st.Path("alice"))
	unchanged()
}

// A link to a file that does not exist yet would be created by the first write.
func TestDanglingSymlinkedInboxIsNotCreated(t *testing.T) {
	st := newTestStore(t)
	target := filepath.Join(t.TempDir(), "created-outside")
	symlink(t, target, st.Path("alice"))
	_, err := st.Append("alice", testMsg("hi"))
	wantLinkRefused(t, "Append", err, st.Path("alice"))
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Append created %s through the link: %v", target, err)
	}
}

// The lock file beside a log is opened with O_CREAT: a dangling link there
// would create a file outside.
func TestLockFileSymlinkIsNotFollowed(t *testing.T) {
	st := newTestStore(t)
	target := filepath.Join(t.TempDir(), "created-outside")
	symlink(t, target, st.Path("alice")+".lock")
	_, err := st.Append("alice", testMsg("hi"))
	wantLinkRefused(t, "Append", err, st.Path("alice")+".lock")
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("locking created %s through the link: %v", target, err)
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
		if s, err := st.Stats(name); err != nil || s != (Stats{Broken: want}) {
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
	if err := st.Commit("carol", mustRead(t, st, "carol")); err != nil {
		t.Fatal(err)
	}
	outside, unchanged := outsideFile(t)
	symlink(t, outside, st.Path("alice"))
	if err := os.Mkdir(st.Path("bob"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, st.cursorPath("carol")+".corrupt-20260101T000000.000000000Z", "x")
	names, err := st.Names()
	if err != nil || strings.Join(names, " ") != "alice bob carol" {
		t.Errorf("Names = %v, %v; want alice bob carol", names, err)
	}
	for _, n := range names {
		s, err := st.Stats(n)
		if err != nil || (s.Broken != "") != (n != "carol") {
			t.Errorf("Stats(%s) = %+v, %v", n, s, err)
		}
	}
	unchanged()
}
