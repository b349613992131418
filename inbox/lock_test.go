//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
	"github.com/agentteam/agentteam/internal/testutil/testkit"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

var tryFlock = testfs.TryFlock

// An inbox is locked on the log itself: appends and commits hold a flock
// of the log (another process taking one waits), and no lock file is made.
func TestInboxLockIsTheLogsOwnFlock(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	h, err := statefile.HoldLog(st.Path("bob"), false)
	if err != nil {
		t.Fatal(err)
	}
	if tryFlock(t, st.Path("bob")) {
		t.Error("the log's flock is free while the inbox's lock is held")
	}
	h.Unlock()
	if !tryFlock(t, st.Path("bob")) {
		t.Error("the log's flock is still held after unlock")
	}
	if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(st.Path("bob") + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a lock file was made: %v", err)
	}
}

// Another process's flock of the log (an appender of this version) keeps
// a commit waiting until it is released.
func TestCommitWaitsForAnotherHoldersFlock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sees the waiting flock in /proc/locks")
	}
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	b := mustRead(t, st, "bob")
	f, err := os.OpenFile(st.Path("bob"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.Commit(t.Context(), "bob", b) }()
	// The commit is blocked in flock(2) once /proc/locks lists a waiter on the log.
	waiter := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	testkit.Eventually(t, 10*time.Second, "the commit to wait on the log's flock", func() bool {
		data, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skipf("no /proc/locks: %v", err)
		}
		if slices.ContainsFunc(strings.Split(string(data), "\n"), func(l string) bool {
			return strings.Contains(l, "-> FLOCK") && strings.Contains(l, waiter)
		}) {
			return true
		}
		select {
		case err := <-done:
			t.Fatalf("Commit returned (%v) while another holder had the log's flock", err)
		default:
		}
		return false
	})
	if has, _ := st.HasUnread(t.Context(), "bob"); !has {
		t.Error("the position moved while another holder had the lock")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if has, _ := st.HasUnread(t.Context(), "bob"); has {
		t.Error("nothing committed once the lock was released")
	}
}

// The kept append descriptor must not write into a log that was replaced:
// the next line goes to the file the path names now.
func TestAppendFollowsAReplacedLog(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	old, err := os.Open(st.Path("bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	before, _ := old.Stat()
	tmp := st.Path("bob") + ".new"
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, st.Path("bob")); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "bob", "two")
	msgs, _, err := st.ReadAll(t.Context(), "bob")
	if err != nil || len(msgs) != 1 || msgs[0].Content != "two" {
		t.Fatalf("the new log holds %+v, %v; want only \"two\"", msgs, err)
	}
	if fi, _ := old.Stat(); fi.Size() != before.Size() {
		t.Errorf("the replaced log grew from %d to %d bytes", before.Size(), fi.Size())
	}
}

// Store.Close gives its kept descriptors back (statefile bounds them).
func TestKeptDescriptorsAreReleased(t *testing.T) {
	st := newTestStore(t)
	before := statefile.KeptFiles()
	for _, name := range []string{"a", "b", "c"} {
		mustAppend(t, st, name, "hi")
	}
	if err := st.Commit(t.Context(), "a", mustRead(t, st, "a")); err != nil {
		t.Fatal(err)
	}
	// Each log's own descriptor, which is its lock too; the read position
	// is on the log (off Linux, a NAME.cursor file kept open too).
	want := int64(3)
	if runtime.GOOS != "linux" {
		want = 4
	}
	if got := statefile.KeptFiles() - before; got != want {
		t.Errorf("3 inboxes and a read position keep %d descriptors, want %d", got, want)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got := statefile.KeptFiles(); got != before {
		t.Errorf("after Close %d descriptors are kept, want %d", got, before)
	}
	mustAppend(t, st, "a", "again") // closed files open again when needed
	assertContents(t, mustRead(t, st, "a"), "again")
}
