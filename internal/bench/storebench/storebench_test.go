//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// TestMain lets the test binary stand for the program's children (the
// wake receiver and the appender re-execute os.Executable()).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case receiveFlag:
			os.Exit(receiveChild())
		case appendFlag:
			os.Exit(appendChild(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func localNATS(t *testing.T) storeConf {
	t.Helper()
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return storeConf{name: "JetStream", urls: s.ClientURL(), team: "t", replicas: 1}
}

// The wake measurement through two real processes: every message sent
// arrives once in the receiver, each with a send→in-hand time, and
// every batch has a wake time or is counted stale.
func TestWakeRunDeliversEveryMessageToTheOtherProcess(t *testing.T) {
	for _, c := range []storeConf{{name: "files", dir: t.TempDir()}, localNATS(t)} {
		t.Run(c.name, func(t *testing.T) {
			const sends = 30
			r, appends, _, err := wakeRun(c, sends, time.Millisecond, func() time.Duration { return 0 })
			if err != nil {
				t.Fatal(err)
			}
			if len(r.InHand) != sends || len(appends) != sends {
				t.Fatalf("in hand %d, appends %d; want %d each", len(r.InHand), len(appends), sends)
			}
			if len(r.Wake)+r.Stale == 0 || len(r.Wake)+r.Stale > sends {
				t.Errorf("%d wakes and %d stale batches for %d messages", len(r.Wake), r.Stale, sends)
			}
			for i, d := range r.InHand {
				if d <= 0 {
					t.Errorf("message %d in hand %v after its send", i, d)
				}
			}
		})
	}
}

// The append child appends for the given time from N goroutines and
// reports what it stored; on the files the lines are all in the inbox.
func TestAppendChildCountsWhatItStored(t *testing.T) {
	c := storeConf{name: "files", dir: t.TempDir()}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := runAppend(self, c, nil, 4, "own", 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count == 0 || r.Errors != 0 {
		t.Fatalf("appended %d, %d errors (%s)", r.Count, r.Errors, r.FirstErr)
	}
	mb, closeFn, err := c.open()
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	var total int64
	for _, name := range []string{"r0", "r1", "r2", "r3"} {
		b, err := mb.ReadUnread(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(b.Messages))
	}
	// Each inbox also holds the one line appended before the clock started.
	if total != r.Count+4 {
		t.Errorf("the inboxes hold %d lines; the child reported %d appends plus 4 warm-up lines", total, r.Count)
	}
}

// The call counter, through a real server: two messages appended to an
// inbox are two publishes of kind "publish inbox" and two stream replies,
// and a KV put is "kv registry" (a watch would add its deliveries).
func TestCallCounterCountsByKind(t *testing.T) {
	c := localNATS(t)
	calls, err := countCalls(c.urls)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(context.Background(), nc, "t")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := mb.Append(t.Context(), "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Publish("$KV.agentteam_t_registry.m.bob", nil); err != nil {
		t.Fatal(err)
	}
	// A request the counter sees after the others (its connection's
	// order) ends the wait for them.
	if _, err := nc.Request("$JS.API.INFO", nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	testkit.EventuallyF(t, 10*time.Second, "the counter to see the INFO request", func() bool {
		calls.mu.Lock()
		defer calls.mu.Unlock()
		return calls.n["api INFO"] > 0
	}, func() string { return fmt.Sprintf("counted %v", calls.stop()) })
	n := calls.stop()
	if n["publish inbox"] != 2 || n["kv registry"] != 1 || n["api INFO"] != 1 {
		t.Fatalf("counted %v, want 2 publish inbox, 1 kv registry, 1 api INFO", n)
	}
}
