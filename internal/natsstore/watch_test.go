package natsstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/natsstore"
)

// TestWatchArmsOneTimerForABurst: a burst of messages to a watched inbox
// arms one resignal timer, not one per message, and the watcher is still
// woken after the burst's last message (the second signal of a reader
// that looked before the stream stored it).
func TestWatchArmsOneTimerForABurst(t *testing.T) {
	var timers atomic.Int64
	defer natsstore.CountWatchTimers(&timers)()
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mb, err := natsstore.OpenMailbox(ctx, nc, "burst")
	if err != nil {
		t.Fatal(err)
	}
	wake := mb.Watch(ctx, "bob")
	const n = 300
	for i := range n {
		if _, err := mb.Append("bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Every message was heard once the last is: the subscription's handler
	// runs in order, and a flush makes sure the server sent them all.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The reader is woken until it has read the whole burst.
	deadline := time.After(30 * time.Second)
	for read := 0; read < n; {
		select {
		case <-wake:
			b, err := mb.ReadUnread("bob")
			if err != nil {
				t.Fatal(err)
			}
			if err := mb.Commit("bob", b); err != nil {
				t.Fatal(err)
			}
			read += len(b.Messages)
		case <-deadline:
			t.Fatal("the watcher was not woken for the whole burst")
		}
	}
	if got := timers.Load(); got != 1 {
		t.Fatalf("Watch armed %d timers for %d messages, want 1 re-armed", got, n)
	}
}
