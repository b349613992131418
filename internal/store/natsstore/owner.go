package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
)

// OwnerTTL is how long a team's owner lock outlives a holder that stopped
// refreshing it (killed, cut off): a run on another host may start that
// long after a crash, and an ask of the dead run is abandoned then.
const OwnerTTL = 10 * time.Second

// OwnerKey is the owner lock's key in the lease bucket (only a lead may
// write it: the server's permissions name it).
const OwnerKey = "owner"

// OwnerInfo is the owner lock's value: who runs the team.
type OwnerInfo struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// Owner is a team's owner lock as the lease "owner" in its lease bucket:
// one process on any host runs the team at a time. It has the method set
// of team.OwnerLock.
type Owner struct {
	ls    *Leases
	team  string
	where string // the server, as said in sentences
	ttl   time.Duration
	// dial, if set, makes the connection the lease is held on (RenewOn).
	dial func(context.Context) (*nats.Conn, error)
}

// RenewOn makes Acquire hold the lease on a connection of its own, made by
// dial and closed at release: its refreshes and their answers never wait
// behind the team's traffic on the shared connection (a lead's process
// running hundreds of teammates), nor go with it when the server drops it
// as a slow consumer.
func (o *Owner) RenewOn(dial func(context.Context) (*nats.Conn, error)) *Owner {
	o.dial = dial
	return o
}

// NewOwner is team's owner lock in ls; where names the server in
// sentences ("nats://host:4222").
func NewOwner(ls *Leases, team, where string) *Owner {
	return &Owner{ls: ls, team: team, where: where, ttl: OwnerTTL}
}

// Acquire makes this process the team's runner until release, refreshing
// the lease meanwhile; lost is closed if it stops holding it while it runs
// (not refreshed in time, or taken). While another process holds it, the
// error is one sentence naming its host and pid.
func (o *Owner) Acquire(ctx context.Context) (release func(), lost <-chan struct{}, err error) {
	return o.AcquireThen(ctx, nil)
}

// ErrClaimedLate is the error of an AcquireThen whose claims were made
// after the lease may have ended: a later runner's claims may come first.
var ErrClaimedLate = errors.New("the owner lock was not held for sure once its claims were made (this process was too slow): run again")

// AcquireThen is Acquire that makes claims (then, if not nil) once it
// holds the lease, and keeps the lease only if it still held it for sure
// once they were stored (Lease.Held). So the claims of the team's runners
// are stored in the order they held the lock: a claim that refuses every
// earlier writer (Mailbox.ClaimSender) then fences every earlier runner.
func (o *Owner) AcquireThen(ctx context.Context, then func() error) (release func(), lost <-chan struct{}, err error) {
	host, _ := os.Hostname()
	info, err := json.Marshal(OwnerInfo{Host: host, PID: os.Getpid(), Started: time.Now().UTC()})
	if err != nil {
		return nil, nil, err
	}
	ls, closeConn := o.ls, func() {}
	if o.dial != nil {
		nc, err := o.dial(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("the owner lock of team %s on %s: %w", o.team, o.where, err)
		}
		closeConn = nc.Close
		if ls, err = OpenLeases(ctx, nc, o.team); err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("the owner lock of team %s on %s: %w", o.team, o.where, err)
		}
	}
	l, err := ls.Acquire(ctx, OwnerKey, info, o.ttl)
	if err != nil {
		closeConn()
	}
	var held *HeldError
	if errors.As(err, &held) {
		return nil, nil, fmt.Errorf("%s is already running team %s on %s: use agentteam send, inbox and team to join in from here",
			describeOwner(held.Value), o.team, o.where)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the owner lock of team %s on %s: %w", o.team, o.where, err)
	}
	release = func() {
		// A release runs at the end, when the caller's context is often
		// done already; the lock goes back all the same, within opTimeout.
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		_ = l.Release(ctx)
		closeConn()
	}
	if then != nil {
		if err := then(); err != nil {
			release()
			return nil, nil, fmt.Errorf("the owner lock of team %s on %s: %w", o.team, o.where, err)
		}
		if !l.Held() {
			release()
			return nil, nil, fmt.Errorf("the owner lock of team %s on %s: %w", o.team, o.where, ErrClaimedLate)
		}
	}
	return release, l.Lost(), nil
}

// Running says whether a process holds the owner lock now, and since when
// it runs the team (zero when its value does not say).
func (o *Owner) Running(ctx context.Context) (running bool, since time.Time, err error) {
	v, found, err := o.ls.Get(ctx, OwnerKey)
	if err != nil || !found {
		return false, time.Time{}, err
	}
	var info OwnerInfo
	if json.Unmarshal(v, &info) != nil {
		return true, time.Time{}, nil
	}
	return true, info.Started, nil
}

// Holder names the process that holds the owner lock now, as a refusal
// to run the team names it; "" when none does.
func (o *Owner) Holder(ctx context.Context) (string, error) {
	v, found, err := o.ls.Get(ctx, OwnerKey)
	if err != nil || !found {
		return "", err
	}
	return describeOwner(v), nil
}

// describeOwner names the holder of an owner lock from its value, which
// any client of the team may have written: shown cut short and without
// control characters.
func describeOwner(v []byte) string {
	var info OwnerInfo
	if json.Unmarshal(v, &info) != nil || info.Host == "" {
		return "another agentteam process"
	}
	host := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == 0x7f {
			return '?'
		}
		return r
	}, info.Host)
	if r := []rune(host); len(r) > 64 {
		host = string(r[:64]) + "…"
	}
	s := fmt.Sprintf("agentteam on host %s (pid %d", host, info.PID)
	if !info.Started.IsZero() {
		s += ", since " + info.Started.Local().Format("2006-01-02 15:04:05")
	}
	return s + ")"
}
