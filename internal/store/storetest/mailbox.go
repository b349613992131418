package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// MailboxOpener opens an instance of the store under test. Every call must
// reach the same storage (as two processes on one workspace do): the suite
// opens several to stand for several processes, and a new one to stand for
// the process that comes back after a crash.
type MailboxOpener func(t *testing.T) Mailbox

// RunMailbox runs the mailbox contract against open.
func RunMailbox(t *testing.T, open MailboxOpener) {
	t.Run("ExactlyOnceWithConcurrentWritersAndAReader", func(t *testing.T) { exactlyOnce(t, open) })
	t.Run("CrashBetweenRecordAndCommitRedelivers", func(t *testing.T) { crashRedelivers(t, open) })
	t.Run("CommitNeverMovesBack", func(t *testing.T) { commitNeverMovesBack(t, open) })
	t.Run("WatchWakesOnAnotherInstancesAppend", func(t *testing.T) { watchWakes(t, open) })
	t.Run("InboxesAreSeparate", func(t *testing.T) { separate(t, open) })
	t.Run("ReadSinceReadsEachMessageOnce", func(t *testing.T) { readSince(t, open) })
	t.Run("ACancelledCallDoesNothing", func(t *testing.T) { cancelled(t, open) })
	t.Run("OneNameRule", func(t *testing.T) { oneNameRule(t, open) })
}

func send(t *testing.T, mb Mailbox, to, from, content string) inbox.Message {
	t.Helper()
	m, err := mb.Append(t.Context(), to, inbox.Message{Type: inbox.TypeMessage, From: from, To: to, Content: content})
	if err != nil {
		t.Fatalf("append to %s: %v", to, err)
	}
	if m.ID == "" {
		t.Fatalf("append to %s gave no id", to)
	}
	return m
}

// drain reads and commits until the inbox is empty, returning the messages.
func drain(t *testing.T, mb Mailbox, name string) []inbox.Message {
	t.Helper()
	var out []inbox.Message
	for {
		b, err := mb.ReadUnread(t.Context(), name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if b.Empty() {
			return out
		}
		out = append(out, b.Messages...)
		if err := mb.Commit(t.Context(), name, b); err != nil {
			t.Fatalf("commit %s: %v", name, err)
		}
	}
}

// exactlyOnce: 4 instances × 4 goroutines × 150 appends while a fifth
// instance reads and commits as it goes; every message is read exactly once.
func exactlyOnce(t *testing.T, open MailboxOpener) {
	const instances, writers, each = 4, 4, 150
	reader := open(t)
	sent := make(chan string, instances*writers*each)
	var wg sync.WaitGroup
	for i := range instances {
		mb := open(t)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range each {
					m, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob",
						Content: fmt.Sprintf("i%d w%d n%d", i, w, n)})
					if err != nil {
						t.Errorf("append: %v", err)
						return
					}
					sent <- m.ID
				}
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	got := map[string]int{}
	read := func() {
		b, err := reader.ReadUnread(t.Context(), "alice")
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, m := range b.Messages {
			got[m.ID]++
		}
		if len(b.Bad) > 0 {
			t.Fatalf("%d bad lines while writers append: %+v", len(b.Bad), b.Bad[0])
		}
		if err := reader.Commit(t.Context(), "alice", b); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	for writing := true; writing; {
		select {
		case <-done:
			writing = false
		default:
		}
		read()
	}
	read() // what came after the last read during the writes
	close(sent)
	want := 0
	for id := range sent {
		want++
		if got[id] != 1 {
			t.Errorf("message %s read %d times, want once", id, got[id])
		}
	}
	if len(got) != want || want != instances*writers*each {
		t.Fatalf("read %d distinct messages of %d sent (want %d)", len(got), want, instances*writers*each)
	}
	if has, err := reader.HasUnread(t.Context(), "alice"); err != nil || has {
		t.Fatalf("after draining HasUnread = %v, %v", has, err)
	}
}

// crashRedelivers: a reader that read a batch and died before committing
// it gets the same messages again from a new instance; once committed they
// are gone for good.
func crashRedelivers(t *testing.T, open MailboxOpener) {
	first := open(t)
	a := send(t, first, "carol", "lead", "one")
	b := send(t, first, "carol", "lead", "two")
	batch, err := first.ReadUnread(t.Context(), "carol")
	if err != nil || len(batch.Messages) != 2 {
		t.Fatalf("read %d messages, %v", len(batch.Messages), err)
	}
	// The reader records the batch, then dies before Commit.
	again := open(t)
	if has, err := again.HasUnread(t.Context(), "carol"); err != nil || !has {
		t.Fatalf("after a crash before commit HasUnread = %v, %v; want true", has, err)
	}
	re, err := again.ReadUnread(t.Context(), "carol")
	if err != nil || len(re.Messages) != 2 || re.Messages[0].ID != a.ID || re.Messages[1].ID != b.ID {
		t.Fatalf("re-delivered %+v, %v; want the same two messages in order", re.Messages, err)
	}
	if err := again.Commit(t.Context(), "carol", re); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, open(t), "carol"); len(got) != 0 {
		t.Fatalf("committed messages came back: %+v", got)
	}
}

// commitNeverMovesBack: committing an older batch after a newer one
// changes nothing, and a batch committed twice is read once.
func commitNeverMovesBack(t *testing.T, open MailboxOpener) {
	mb := open(t)
	send(t, mb, "dave", "lead", "one")
	old, _ := mb.ReadUnread(t.Context(), "dave")
	send(t, mb, "dave", "lead", "two")
	newer, _ := mb.ReadUnread(t.Context(), "dave")
	if len(newer.Messages) != 2 {
		t.Fatalf("second read has %d messages, want 2", len(newer.Messages))
	}
	if err := mb.Commit(t.Context(), "dave", newer); err != nil {
		t.Fatal(err)
	}
	if err := mb.Commit(t.Context(), "dave", old); err != nil {
		t.Fatal(err)
	}
	if err := mb.Commit(t.Context(), "dave", newer); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, mb, "dave"); len(got) != 0 {
		t.Fatalf("an older commit moved the read position back: %d messages again", len(got))
	}
	third := send(t, mb, "dave", "lead", "three")
	if got := drain(t, mb, "dave"); len(got) != 1 || got[0].ID != third.ID {
		t.Fatalf("after the commits read %+v, want only the third message", got)
	}
}

// watchWakes: a watcher is woken by an append through another instance,
// and a watch started with something unread fires at once. The bound only
// catches a watch that never fires; latency is a benchmark's business.
func watchWakes(t *testing.T, open MailboxOpener) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watcher, writer := open(t), open(t)
	ch := watcher.Watch(ctx, "erin")
	drainSignals(ch)
	send(t, writer, "erin", "lead", "wake up")
	waitSignal(t, ch, "an append by another instance")

	ch2 := open(t).Watch(ctx, "erin")
	waitSignal(t, ch2, "a watch started with a message unread")
	cancel()
	for range ch {
	}
}

func drainSignals(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("watch closed before %s", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake after %s", what)
	}
}

// separate: one agent's messages never show in another's inbox.
func separate(t *testing.T, open MailboxOpener) {
	mb := open(t)
	send(t, mb, "frank", "lead", "for frank")
	send(t, mb, "grace", "lead", "for grace")
	if got := drain(t, mb, "frank"); len(got) != 1 || got[0].Content != "for frank" || got[0].To != "frank" {
		t.Fatalf("frank read %+v", got)
	}
	if got := drain(t, mb, "grace"); len(got) != 1 || got[0].Content != "for grace" {
		t.Fatalf("grace read %+v", got)
	}
}

// readSince: reading on from where the last ReadSince left gives only the
// messages appended since (by any instance), in order, whatever the read
// position; nothing new is none; a new instance reading from nil (a process
// after a crash) gets them all.
func readSince(t *testing.T, open MailboxOpener) {
	reader, writer := open(t), open(t)
	ids := func(ms []inbox.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	got, since, err := reader.ReadSince(t.Context(), "heidi", nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("an empty inbox read %v, %v", ids(got), err)
	}
	var want []string
	for i := range 3 {
		want = append(want, send(t, writer, "heidi", "lead", fmt.Sprintf("m%d", i)).ID)
	}
	send(t, writer, "ivan", "lead", "not heidi's")
	got, since, err = reader.ReadSince(t.Context(), "heidi", since)
	if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Fatalf("first read gave %v, %v; want %v", ids(got), err, want)
	}
	// The read position is not ReadSince's: a commit moves it, ReadSince reads on.
	drain(t, writer, "heidi")
	got, since, err = reader.ReadSince(t.Context(), "heidi", since)
	if err != nil || len(got) != 0 {
		t.Fatalf("with nothing new ReadSince gave %v, %v", ids(got), err)
	}
	var more []string
	for i := range 2 {
		more = append(more, send(t, writer, "heidi", "lead", fmt.Sprintf("n%d", i)).ID)
	}
	got, since, err = reader.ReadSince(t.Context(), "heidi", since)
	if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(more) {
		t.Fatalf("after two more ReadSince gave %v, %v; want only %v", ids(got), err, more)
	}
	if got, _, err = reader.ReadSince(t.Context(), "heidi", since); err != nil || len(got) != 0 {
		t.Fatalf("read again from the same place gave %v, %v; want none", ids(got), err)
	}
	got, _, err = open(t).ReadSince(t.Context(), "heidi", nil)
	if all := append(want, more...); err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(all) {
		t.Fatalf("a new instance from the start read %v, %v; want %v", ids(got), err, all)
	}
}

// cancelled: an append or a read whose context is done fails with its
// error and changes nothing; the message is not stored.
func cancelled(t *testing.T, open MailboxOpener) {
	mb := open(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := mb.Append(ctx, "judy", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "too late"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with its context done: %v, want context.Canceled", err)
	}
	send(t, mb, "judy", "lead", "in time")
	if _, err := mb.ReadUnread(ctx, "judy"); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with its context done: %v, want context.Canceled", err)
	}
	if got := drain(t, open(t), "judy"); len(got) != 1 || got[0].Content != "in time" {
		t.Fatalf("read %+v, want only the message sent in time", got)
	}
}

// BenchmarkWatch measures the wake latency of an append through another
// instance: the figure BENCHMARKS.md compares across stores.
func BenchmarkWatch(b *testing.B, open func(b *testing.B) Mailbox) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watcher, writer := open(b), open(b)
	ch := watcher.Watch(ctx, "bench")
	drainSignals(ch)
	b.ResetTimer()
	for range b.N {
		if _, err := writer.Append(ctx, "bench", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "x"}); err != nil {
			b.Fatal(err)
		}
		<-ch
	}
}

// oneNameRule: every store takes the agent names inbox.ValidateName takes
// and refuses the others, as sender or inbox, so a name that works on one
// host's files works across hosts too.
func oneNameRule(t *testing.T, open MailboxOpener) {
	mb := open(t)
	for _, name := range []string{"", "a.b", "a b", "-x", "../x", "zoë", strings.Repeat("a", inbox.MaxNameLen+1)} {
		if _, err := mb.Append(t.Context(), name, inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "x"}); !errors.Is(err, inbox.ErrInvalid) {
			t.Errorf("append to %q: %v, want ErrInvalid", name, err)
		}
		if _, err := mb.Append(t.Context(), "judy", inbox.Message{Type: inbox.TypeMessage, From: name, Content: "x"}); !errors.Is(err, inbox.ErrInvalid) {
			t.Errorf("append from %q: %v, want ErrInvalid", name, err)
		}
		if _, err := mb.ReadUnread(t.Context(), name); !errors.Is(err, inbox.ErrInvalid) {
			t.Errorf("read %q: %v, want ErrInvalid", name, err)
		}
	}
	longest := strings.Repeat("a", inbox.MaxNameLen)
	for _, name := range []string{longest, "_x", "Bob_2-x", inbox.LeadName, inbox.UserName} {
		send(t, mb, name, "user", "hi "+name)
		if got := drain(t, mb, name); len(got) != 1 || got[0].Content != "hi "+name {
			t.Errorf("inbox %q read %+v, want the one message", name, got)
		}
	}
	names, err := mb.Names(t.Context())
	if err != nil {
		t.Fatalf("names: %v", err)
	}
	if !slices.Contains(names, longest) {
		t.Errorf("names %v: want %q among them", names, longest)
	}
}
