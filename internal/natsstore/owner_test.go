package natsstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/natsstore"
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
