package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// OwnerLock makes one process at a time the runner of a team: two leads
// sharing one lead inbox would steal each other's messages. The default is
// a file lock in the workspace (FileOwnerLock); a team whose state is on a
// NATS server takes a lease there (natsstore.Owner), so that two hosts
// cannot both run it.
type OwnerLock interface {
	// Acquire makes this process the runner until release is called;
	// lost (nil: never) is closed if it stops being the runner meanwhile.
	// While another runs the team, the error is one sentence naming it.
	Acquire(ctx context.Context) (release func(), lost <-chan struct{}, err error)
	// Running says whether some process runs the team now and since when
	// (zero when unknown): how another process tells a live ask from an
	// abandoned one.
	Running(ctx context.Context) (running bool, since time.Time, err error)
}

// FileOwnerLock is the owner lock of the team in teamDir: the file
// owner.lock, which the kernel releases when its holder dies.
func FileOwnerLock(teamDir string) OwnerLock { return fileOwner(teamDir) }

// fileOwner is the owner lock as a file of the team's directory.
type fileOwner string

func (dir fileOwner) Acquire(context.Context) (func(), <-chan struct{}, error) {
	o, err := acquireOwner(string(dir))
	if err != nil {
		return nil, nil, err
	}
	return o.release, nil, nil
}

func (dir fileOwner) Running(context.Context) (bool, time.Time, error) {
	w, err := WatchAsks(string(dir))
	return w.running, w.since, err
}

// ownerLock makes one process at a time the runner of a workspace's team:
// two leads sharing one lead inbox would steal each other's messages. The
// kernel releases the lock when the process dies, so a crash never blocks
// the next run. It is also how liveness is judged: a teammate is running
// only while some process holds this lock (a PID alone can be reused).
type ownerLock struct {
	fl   *flock.Flock
	path string
}

func ownerLockPath(teamDir string) string { return filepath.Join(teamDir, "owner.lock") }

func acquireOwner(teamDir string) (*ownerLock, error) {
	path := ownerLockPath(teamDir)
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		who := "another agentteam process"
		if data, err := os.ReadFile(path + ".pid"); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				who = fmt.Sprintf("another agentteam process (pid %d)", pid)
			}
		}
		return nil, &heldError{who: who}
	}
	// The pid file only names the owner in the message above; the lock is the truth.
	_ = os.WriteFile(path+".pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return &ownerLock{fl: fl, path: path}, nil
}

func (o *ownerLock) release() {
	if o == nil {
		return
	}
	_ = os.Remove(o.path + ".pid")
	_ = o.fl.Unlock()
}

// CheckNotRunning refuses, with the sentence Open would give, a team
// another process runs from teamDir (its file owner lock held): before a
// question that would be asked for nothing.
func CheckNotRunning(teamDir string) error {
	o, err := acquireOwner(teamDir)
	if err != nil {
		return err
	}
	o.release()
	return nil
}

// heldError is the refusal of a workspace's owner lock another process
// holds; who names it.
type heldError struct{ who string }

func (e *heldError) Error() string {
	return e.who + " is already running the team in this workspace: use agentteam send, inbox and team to join in from here"
}

// Runner names the process that runs the team of teamDir (its file owner
// lock held), "" when none does: how a chat knows to watch instead.
func Runner(teamDir string) string {
	o, err := acquireOwner(teamDir)
	if err == nil {
		o.release()
		return ""
	}
	var held *heldError
	if errors.As(err, &held) {
		return held.who
	}
	return "" // no lock to take (no team yet): nobody runs it
}

// HoldOwner takes the file owner lock of the team in teamDir if nobody
// holds it: ok is false while a process runs the team. release lets go.
func HoldOwner(teamDir string) (release func(), ok bool, err error) {
	path := ownerLockPath(teamDir)
	fl := flock.New(path)
	ok, err = fl.TryLock()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() { _ = fl.Unlock() }, true, nil
}

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
