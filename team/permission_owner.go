package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// AskWatch tells, from another process, whether a permission ask in the
// team's inboxes still has a caller waiting for its answer: an ask waits
// only while the process that made it runs the team. That process holds
// the owner lock from before its first ask until it ends; the kernel
// drops a file lock when it dies, even by SIGKILL, and a lease on a NATS
// server expires natsstore.OwnerTTL after its last refresh.
type AskWatch struct {
	running bool
	since   time.Time // when the running owner took the lock; zero if unknown
}

// WatchAsks looks once at the team in teamDir: whether a process runs it
// now, and since when. It takes the owner lock for an instant when nobody
// holds it (a run starting at that very instant is told the team runs).
func WatchAsks(teamDir string) (AskWatch, error) {
	path := ownerLockPath(teamDir)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return AskWatch{}, nil // no run ever started here
	}
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return AskWatch{}, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		_ = fl.Unlock()
		return AskWatch{}, nil
	}
	w := AskWatch{running: true}
	// The owner writes its pid file right after it takes the lock and
	// before any agent runs: its time is when that process began. A pid
	// file whose process is gone is a killed run's, not yet replaced by
	// the owner that just took the lock: that owner began a moment ago and
	// has made no ask yet, so every ask in the inboxes is older than it
	// (taking the file's time, a killed run's asks looked waiting again).
	if data, err := os.ReadFile(path + ".pid"); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && !processAlive(pid) {
			w.since = time.Now()
			return w, nil
		}
	}
	if fi, err := os.Stat(path + ".pid"); err == nil {
		w.since = fi.ModTime()
	}
	return w, nil
}

// processAlive reports whether a process pid runs (on this host).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WatchAsksOn is WatchAsks for any owner lock: a file, or a lease on a
// NATS server whose holder may run on another host.
func WatchAsksOn(ctx context.Context, lock OwnerLock) (AskWatch, error) {
	running, since, err := lock.Running(ctx)
	if err != nil {
		return AskWatch{}, err
	}
	return AskWatch{running: running, since: since}, nil
}

// Waits reports whether an ask made at asked still has its caller
// waiting: a process runs the team and it is the one that made the ask
// (the ask is not older than its taking the lock). Inbox times are cut to
// the millisecond, so the lock's time is too.
func (w AskWatch) Waits(asked time.Time) bool {
	if !w.running {
		return false
	}
	return w.since.IsZero() || !asked.Before(w.since.Truncate(time.Millisecond))
}
