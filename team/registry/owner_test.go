package registry

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// An ask of a killed run is not taken for the new owner's in the moment
// between the new owner's taking the lock and its writing its pid: the
// pid file left is the dead run's, whose time is before the ask.
func TestAKilledRunsAskIsNotWaitingWhileTheNextOwnerStarts(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pidFile := ownerLockPath(dir) + ".pid"
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now().Add(-time.Minute)
	if err := os.Chtimes(pidFile, began, began); err != nil {
		t.Fatal(err)
	}
	asked := began.Add(10 * time.Second) // the killed run's ask, after it began
	// The new owner holds the lock and has not written its pid yet.
	fl := flock.New(ownerLockPath(dir))
	if ok, err := fl.TryLock(); err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer fl.Unlock()
	w, err := WatchAsks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Waits(asked) {
		t.Fatal("the killed run's ask is taken for a waiting one while the next owner starts")
	}
	if !w.Waits(time.Now().Add(time.Second)) {
		t.Fatal("an ask the new owner makes from now on is not taken for waiting")
	}
}
