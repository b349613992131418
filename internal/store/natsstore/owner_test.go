package natsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The owner lock's value comes from any client of the team: a host name
// with escape sequences or of any length is shown cut short and without
// control characters, and a value that is not JSON names nobody.
func TestAnOwnerLocksHostileValueIsShownHarmless(t *testing.T) {
	url := startServer(t)
	ls, _ := openLeases(t, url, "hostile")
	ctx := context.Background()
	for _, value := range []string{
		mustJSON(t, natsstore.OwnerInfo{Host: "\x1b[2J\x1b[Hevil\r\nhost" + strings.Repeat("é", 500), PID: 7, Started: time.Now()}),
		"not json \x1b[31m",
	} {
		l, err := ls.Acquire(ctx, "owner", []byte(value), leaseTTL)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = natsstore.NewOwner(ls, "hostile", "nats://x").Acquire(ctx)
		if err == nil {
			t.Fatal("acquired an owner lock another holds")
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\x1b\r\n") || len(msg) > 400 || !strings.Contains(msg, "is already running team hostile on nats://x") {
			t.Errorf("the refusal is %q", msg)
		}
		if running, _, err := natsstore.NewOwner(ls, "hostile", "nats://x").Running(ctx); err != nil || !running {
			t.Errorf("Running = %v, %v while held", running, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An owner whose claims were stored after its lease may have ended keeps
// nothing: a later holder's claims may have come first. The owner's lease
// renews on a connection of its own, which its claims cut before waiting
// until another process took the lock; AcquireThen then says it came
// late, and letting its lease go leaves the new holder's alone.
func TestAnOwnerWhoseClaimsCameLateKeepsNothing(t *testing.T) {
	url := startServer(t)
	ls, _ := openLeases(t, url, "slow")
	other, _ := openLeases(t, url, "slow")
	ctx := context.Background()
	var renew *nats.Conn
	o := natsstore.NewOwner(ls, "slow", url).RenewOn(func(context.Context) (*nats.Conn, error) {
		nc, err := nats.Connect(url)
		renew = nc
		return nc, err
	})
	natsstore.SetOwnerTTL(o, leaseTTL)
	var taken *natsstore.Lease
	_, _, err := o.AcquireThen(ctx, func() error {
		renew.Close() // the lease is refreshed no more
		testkit.Eventually(t, leaseTTL+expiryBound, "another to take the lock no longer renewed", func() bool {
			l, err := other.Acquire(ctx, "owner", []byte(`{"host":"other"}`), leaseTTL)
			if err != nil && !errors.Is(err, natsstore.ErrHeld) {
				t.Fatalf("another could not take the lock: %v", err)
			}
			taken = l
			return err == nil
		})
		return nil
	})
	if !errors.Is(err, natsstore.ErrClaimedLate) {
		t.Fatalf("AcquireThen whose claims came after another took the lock: %v, want ErrClaimedLate", err)
	}
	defer func() { _ = taken.Release(ctx) }()
	v, found, err := other.Get(ctx, "owner")
	if err != nil || !found || string(v) != `{"host":"other"}` {
		t.Errorf("the new holder's lock after the late one let go: %q, %v, %v", v, found, err)
	}
}
