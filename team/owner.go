package team

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentteam/agentteam/workspace"
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

// nobodyAlive is the liveness test for the owner of the team's lock: no
// other process can be running a teammate of this team.
func nobodyAlive(int) bool { return false }

// RepairOrphans marks teammates left queued or working as failed when no
// process runs the team, judged by the owner lock rather than by PIDs: the
// lock is taken for the repair (so no run starts meanwhile) and released.
// While a run holds it, nothing changes. It returns the names repaired.
func RepairOrphans(teamDir string, reg *Registry, events *EventLog) ([]string, error) {
	fl := flock.New(ownerLockPath(teamDir))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", ownerLockPath(teamDir), err)
	}
	if !ok {
		return nil, nil // a live process runs the team: its statuses are true
	}
	defer func() { _ = fl.Unlock() }()
	repaired, err := reg.RepairDead(nobodyAlive)
	if err != nil {
		return nil, err
	}
	emitRepairs(events, repaired)
	return repaired, nil
}

func emitRepairs(events EventSink, names []string) {
	for _, name := range names {
		events.Emit(Event{Agent: name, Payload: Repair{Status: StatusFailed,
			Reason: "left queued or working by an agentteam process that is gone"}})
	}
}

// claimingOwner is an owner lock that makes claims as it is acquired and
// keeps the lock only if it still held it once they were stored
// (natsstore.Owner): the runners' claims are then in the order they ran.
type claimingOwner interface {
	AcquireThen(ctx context.Context, then func() error) (release func(), lost <-chan struct{}, err error)
}

// acquireLead takes the owner lock for the lead's process and, where the
// lock and the mailbox can (a team on NATS), claims the lead's sending
// with it: every message the lead then sends carries leadClaim (0: none),
// and the server refuses it once a later runner of the team has claimed
// the lead's sending in turn — even if this process does not know yet
// that it lost the lock. Where the mailbox keeps keys in its claims, the
// claim holds the key that signs the lead's spawn requests (spawnsign.go).
func acquireLead(ctx context.Context, lock OwnerLock, mb Mailbox) (release func(), lost <-chan struct{}, leadClaim uint64, sign *leadSigner, err error) {
	co, ok := lock.(claimingOwner)
	claims, can := mb.(senderClaims)
	keys, keyed := mb.(leadKeys)
	if !ok || !can {
		if release, lost, err = lock.Acquire(ctx); err != nil || !keyed {
			return release, lost, 0, nil, err
		}
		if sign, err = claimLeadKey(keys); err != nil {
			release()
			return nil, nil, 0, nil, fmt.Errorf("claim the lead's spawn requests: %w", err)
		}
		return release, lost, 0, sign, nil
	}
	release, lost, err = co.AcquireThen(ctx, func() error {
		var err error
		if !keyed {
			leadClaim, err = claims.ClaimSender(workspace.LeadName)
			return err
		}
		if sign, err = claimLeadKey(keys); err == nil {
			leadClaim = sign.claim
		}
		return err
	})
	if err != nil {
		return nil, nil, 0, nil, err
	}
	return release, lost, leadClaim, sign, nil
}
