package natsstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

// The event stream keeps the event log contract: appends from many
// goroutines on several connections are all there, each line whole.
func TestEventStreamKeepsTheEventLogContract(t *testing.T) {
	url := startServer(t)
	open := func(t *testing.T) *natsstore.EventLog {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		l, err := natsstore.OpenEventLog(context.Background(), nc, "t7")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	eventLogContract(t, open)
}

// Two teams on one server have separate logs.
func TestEventStreamsOfTwoTeamsAreSeparate(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	a, err := natsstore.OpenEventLog(context.Background(), nc, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	b, err := natsstore.OpenEventLog(context.Background(), nc, "beta")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AppendLine(t.Context(), []byte(`{"team":"alpha"}`)); err != nil {
		t.Fatal(err)
	}
	if lines, err := b.Lines(context.Background()); err != nil || len(lines) != 0 {
		t.Fatalf("beta's log holds %q, %v; want nothing", lines, err)
	}
	if lines, err := a.Lines(context.Background()); err != nil || len(lines) != 1 || string(lines[0]) != `{"team":"alpha"}` {
		t.Fatalf("alpha's log holds %q, %v; want its one line", lines, err)
	}
}

// A team name that is no single token is refused before any stream exists.
func TestEventStreamRefusesAHostileTeamName(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, name := range []string{"", "a.b", "*", ">", "a b"} {
		if _, err := natsstore.OpenEventLog(context.Background(), nc, name); err == nil {
			t.Errorf("team %q was accepted", name)
		}
	}
}

// eventLogContract runs storetest's event log suite on the logs open gives.
func eventLogContract(t *testing.T, open func(t *testing.T) *natsstore.EventLog) {
	storetest.RunEventLog(t, storetest.EventLogOpener{
		Open: func(t *testing.T) func(int) {
			l := open(t)
			return func(n int) {
				if err := l.AppendLine(t.Context(), fmt.Appendf(nil, `{"n":%d}`, n)); err != nil {
					t.Errorf("append event %d: %v", n, err)
				}
			}
		},
		Read: func(t *testing.T) ([]int, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			lines, err := open(t).Lines(ctx)
			if err != nil {
				return nil, err
			}
			got := make([]int, 0, len(lines))
			for i, line := range lines {
				var e struct{ N int }
				if err := json.Unmarshal(line, &e); err != nil {
					return got, fmt.Errorf("line %d: %w", i+1, err)
				}
				got = append(got, e.N)
			}
			return got, nil
		},
	})
}

// Appends to a three-copy event log while the node leading its stream is
// stopped: each append returns once stored, none fails, and each line is
// in the log once. An append was one publish: the one sent to the leader
// as it went away waited for an answer that never came and the line was
// lost ("the event log is not being written", then TestClusterFailover
// missed a respawn's event).
func TestClusterEventLogKeepsEveryLineWhileItsLeaderStops(t *testing.T) {
	c := startCluster(t)
	const team, writers, each = "eventlag", 4, 60
	logs := make([]*natsstore.EventLog, writers)
	for i := range logs {
		logs[i] = openEventLogR3(t, c, team)
	}
	killed := make(chan string, 1)
	go func() { killed <- stopStreamLeaderAfter(t, c, natsstore.EventStreamName(team), writers*each/4) }()
	var wg sync.WaitGroup
	for w, l := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.AppendLine(t.Context(), []byte(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))); err != nil {
					t.Errorf("append %d of writer %d: %v", i, w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if name := <-killed; name == "" {
		t.Fatal("no node was stopped mid-run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines, err := openEventLogR3(t, c, team).Lines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range lines {
		seen[string(l)]++
	}
	for w := range writers {
		for i := range each {
			if n := seen[fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)]; n != 1 {
				t.Errorf("line %d of writer %d is in the log %d times, want once", i, w, n)
			}
		}
	}
}
