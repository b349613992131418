//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package inbox

import (
	"github.com/agentteam/agentteam/internal/testfs"
	"os"
	"testing"

	"github.com/agentteam/agentteam/internal/statefile"
)

var tryFlock = testfs.TryFlock

// An inbox is locked through gofrs/flock on a separate NAME.jsonl.lock
// file; appends and commits hold it, and the log itself is never locked.
func TestInboxLockIsOnASeparateLockFile(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	unlock, err := statefile.Lock(st.Path("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if tryFlock(t, st.Path("bob")+".lock") {
		t.Error("the lock file's flock is free while the inbox's lock is held")
	}
	if !tryFlock(t, st.Path("bob")) {
		t.Error("the log itself is flocked")
	}
	unlock()
	if !tryFlock(t, st.Path("bob")+".lock") {
		t.Error("the lock file's flock is still held after unlock")
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
	msgs, _, err := st.ReadAll("bob")
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
	if err := st.Commit("a", mustRead(t, st, "a")); err != nil {
		t.Fatal(err)
	}
	// Each log, its lock file, and the read position.
	if got := statefile.KeptFiles() - before; got != 7 {
		t.Errorf("3 inboxes (their logs and lock files) and a read position keep %d descriptors, want 7", got)
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
