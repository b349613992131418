//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package statefile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

var tryFlock = testfs.TryFlock

// A lock file removed between two locks is made anew and locked: the lock
// always excludes whoever opens the path now.
func TestLockFollowsARemovedLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := os.Remove(path + ".lock"); err != nil {
		t.Fatal(err)
	}
	unlock, err = Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if tryFlock(t, path+".lock") {
		t.Error("another opener took the lock file's flock while Lock held it")
	}
	unlock()
	if !tryFlock(t, path+".lock") {
		t.Error("the flock is still held after unlock")
	}
}

// Kept descriptors are bounded (an inbox's Store.Close gives its own back:
// see inbox's TestKeptDescriptorsAreReleased).
func TestKeptDescriptorsAreBounded(t *testing.T) {
	testkit.SkipShort(t)
	dir := t.TempDir()
	for i := range maxHeldFiles + 50 {
		if err := AppendLine(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if n := locks.open.Load(); n > maxHeldFiles {
			t.Fatalf("%d descriptors kept after %d locks, limit %d", n, i+1, maxHeldFiles)
		}
	}
}

// A lock file replaced (renamed over) between two locks is not locked
// through the descriptor kept from before: the lock is taken on the file
// the path names now, which is the one another process would open.
func TestLockFollowsAReplacedLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := os.WriteFile(path+".lock.new", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".lock.new", path+".lock"); err != nil {
		t.Fatal(err)
	}
	unlock, err = Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if tryFlock(t, path+".lock") {
		t.Error("another opener took the new lock file's flock while Lock held it")
	}
	unlock()
	if !tryFlock(t, path+".lock") {
		t.Error("the flock is still held after unlock")
	}
}
