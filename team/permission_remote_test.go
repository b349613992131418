package team

import (
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/team/hosts"
)

// A spawn request comes off the wire: who answers its teammate's asks,
// and how long they wait, are checked like the rest of it.
func TestSpawnRequestRefusesHostileAsks(t *testing.T) {
	ok := hosts.Request{ID: "spawn-1", Name: "alice", Role: "writer", From: "lead"}
	for _, c := range []struct {
		asks    string
		timeout time.Duration
		want    string
	}{
		{"", 0, ""},
		{"user", time.Minute, ""},
		{"lead", 0, ""},
		{"mallory", 0, "not user, lead or empty"},
		{"../user", 0, "not user, lead or empty"},
		{"user", -time.Second, "between 0 and 24h"},
		{"user", 25 * time.Hour, "between 0 and 24h"},
	} {
		q := ok
		q.Asks, q.AskTimeout = c.asks, c.timeout
		err := q.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("asks %q, %s: refused: %v", c.asks, c.timeout, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("asks %q, %s: %v, want %q", c.asks, c.timeout, err, c.want)
		}
	}
}

func TestWorkerPlace(t *testing.T) {
	for _, c := range []struct{ worker, host, want string }{
		{"gpu1", "box-b", "gpu1@box-b"},
		{"box-b-4242", "box-b", "box-b-4242"}, // the default id names its host
		{"gpu1", "", "gpu1"},
		{"w\x1b[2J", "h\r\x07", "w?[2J@h??"},
		{strings.Repeat("w", 40), "h", strings.Repeat("w", 24) + "…@h"},
	} {
		if got := WorkerPlace(c.worker, c.host); got != c.want {
			t.Errorf("WorkerPlace(%q, %q) = %q, want %q", c.worker, c.host, got, c.want)
		}
	}
}
