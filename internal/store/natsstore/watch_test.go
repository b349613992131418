package natsstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsstore"
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
		if _, err := mb.Append(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: fmt.Sprint("m", i)}); err != nil {
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
			b, err := mb.ReadUnread(ctx, "bob")
			if err != nil {
				t.Fatal(err)
			}
			if err := mb.Commit(ctx, "bob", b); err != nil {
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

// TestAQuietWatchSignalsOnlyNowAndThen: a watched inbox nobody writes to
// is signalled at the backstops just after its start and at every full
// backstop, not at each (every signal is a request of its reader: 1,000
// idle teammates asked 200 a second); a message heard makes the next
// backstops signal again, for a store that comes late. Without the quiet
// backstops every tick signals.
func TestAQuietWatchSignalsOnlyNowAndThen(t *testing.T) {
	ticks, done := make(chan time.Time), make(chan bool)
	defer natsstore.DriveWatchBackstops(ticks, done)()
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mb, err := natsstore.OpenMailbox(ctx, nc, "quiet")
	if err != nil {
		t.Fatal(err)
	}
	wake := mb.Watch(ctx, "bob")
	// tick sends one backstop and says whether it signalled, after
	// checking the reader's channel agrees (then empty again).
	tick := func() bool {
		ticks <- time.Now()
		s := <-done
		select {
		case <-wake:
			if !s {
				t.Fatal("woken by a backstop that says it did not signal")
			}
		default:
			if s {
				t.Fatal("a backstop said it signalled, and the reader was not woken")
			}
		}
		return s
	}
	pattern := func(n int) (got string) {
		for range n {
			if tick() {
				got += "S"
			} else {
				got += "."
			}
		}
		return got
	}
	full, news := natsstore.WatchFullBackstops, natsstore.WatchBackstops
	want := func(from, n int) (w string) {
		for i := from; i < from+n; i++ {
			switch {
			case i%full == 0, i-from < news:
				w += "S"
			default:
				w += "."
			}
		}
		return w
	}
	// From the start: news, then quiet until the full backstops.
	if got, w := pattern(2*full), want(1, 2*full); got != w {
		t.Fatalf("backstops of a quiet inbox signalled %s, want %s", got, w)
	}
	if _, err := mb.Append(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	<-wake // the message's own signal
	// The handler ran before the signal came: the next backstops have news.
	if got, w := pattern(full), want(2*full+1, full); got != w {
		t.Fatalf("backstops after a message signalled %s, want %s", got, w)
	}
}
