package inbox

import (
	"context"
	"testing"
	"time"
)

func TestWatchWakesOnAppendInProcess(t *testing.T) {
	st := NewStoreWithOptions(t.TempDir(), StoreOptions{PollInterval: time.Hour})
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	select {
	case <-ch:
		t.Fatal("woken with nothing unread")
	default:
	}
	mustAppend(t, st, "bob", "hi")
	receive(t, ch, "in-process append")
}

func TestWatchStartsWokenWhenUnread(t *testing.T) {
	st := NewStoreWithOptions(t.TempDir(), StoreOptions{PollInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustAppend(t, st, "bob", "before watching")
	select {
	case <-st.Watch(ctx, "bob"):
	default:
		t.Error("a line appended before Watch gave no initial value")
	}
}

// Ten appends leave one value, and the size check keeps fsnotify's late
// events for the same bytes from adding another.
func TestWatchCoalesces(t *testing.T) {
	st := NewStoreWithOptions(t.TempDir(), StoreOptions{PollInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	for range 10 {
		mustAppend(t, st, "bob", "x")
	}
	if len(ch) != 1 || cap(ch) != 1 {
		t.Fatalf("len %d cap %d, want 1 and 1", len(ch), cap(ch))
	}
	<-ch
	// Only a new size can signal: the child's line. Once that wake is taken,
	// no event (its own or a late one for the ten) may leave another.
	c := startChild(t, "send", envs(envDir, st.Dir(), envName, "bob", envPrefix, "other", envCount, "1")...)
	c.wait(t)
	receive(t, ch, "append by another process")
	if b := mustRead(t, st, "bob"); len(b.Messages) != 11 {
		t.Errorf("read %d messages, want 11", len(b.Messages))
	}
	if len(ch) != 0 {
		t.Error("a second wake for the same bytes")
	}
}

// The poll is an hour away, so only fsnotify can deliver this wake.
func TestWatchWakesOnAppendByAnotherProcess(t *testing.T) {
	st := NewStoreWithOptions(t.TempDir(), StoreOptions{PollInterval: 10 * time.Second})
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	c := startChild(t, "send", envs(envDir, st.Dir(), envName, "bob", envPrefix, "p", envCount, "1")...)
	_ = c.stdin.Close() // open the gate
	receive(t, ch, "cross-process append")
	c.wait(t)
	assertContents(t, mustRead(t, st, "bob"), "p-0")
}

func TestWatchPollWithoutFsnotify(t *testing.T) {
	st := NewStoreWithOptions(t.TempDir(), StoreOptions{PollInterval: 20 * time.Millisecond})
	if err := st.Close(); err != nil { // closed: later Watch calls poll only
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	if st.watch.watcher != nil {
		t.Fatal("a closed store started fsnotify")
	}
	rawAppend(t, st.Path("bob"), "{}\n") // another writer, not this Store
	receive(t, ch, "poll")
}

func TestWatchEndsWithContext(t *testing.T) {
	st := NewStore(t.TempDir())
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	ch1, ch2 := st.Watch(ctx1, "bob"), st.Watch(ctx2, "alice")
	if st.watch.watcher == nil {
		t.Error("no shared fsnotify watcher while watching")
	}
	cancel1()
	waitClosed(t, ch1)
	mustAppend(t, st, "bob", "after cancel") // must not send on the closed channel
	mustAppend(t, st, "alice", "still watched")
	receive(t, ch2, "remaining watcher")
	cancel2()
	waitClosed(t, ch2)
	st.watch.mu.Lock()
	defer st.watch.mu.Unlock()
	if st.watch.watcher != nil || st.watch.nsubs != 0 || len(st.watch.subs) != 0 {
		t.Errorf("after all watchers ended: watcher %v, %d subscribers", st.watch.watcher, st.watch.nsubs)
	}
}

func TestWatchInvalidNameIsClosed(t *testing.T) {
	st := NewStore(t.TempDir())
	waitClosed(t, st.Watch(context.Background(), "../x"))
}

func waitClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("channel not closed within 5s of cancel")
		}
	}
}
