package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// SessionLog is one agent's conversation as the loop keeps it
// (loop.SessionLog): appended lines, read back in order.
type SessionLog interface {
	AppendLines(ctx context.Context, lines [][]byte) error
	Lines(ctx context.Context) ([][]byte, error)
	Close() error
}

// SessionsOpener reaches the conversations of one team; every call
// reaches the same store, as processes on several hosts do.
type SessionsOpener struct {
	// Open returns agent's conversation through a new instance.
	Open func(t *testing.T, agent string) SessionLog
	// Archive sets agent's current conversation aside at now (a teammate
	// spawned afresh): the next Lines starts empty.
	Archive func(t *testing.T, agent string, now time.Time) error
	// Archived returns the lines of each of agent's earlier conversations,
	// oldest first.
	Archived func(t *testing.T, agent string) ([][][]byte, error)
	// Tear stores junk in agent's conversation as a crash or another
	// writer would: a line cut short, or garbage.
	Tear func(t *testing.T, agent string, junk []byte)
}

// RunSessions runs the session contract against o.
func RunSessions(t *testing.T, o SessionsOpener) {
	t.Run("AppendsReadBackInOrder", func(t *testing.T) { sessionsOrder(t, o) })
	t.Run("ATornLineLeavesTheOthersWhole", func(t *testing.T) { sessionsTorn(t, o) })
	t.Run("ArchiveStartsAfreshAndKeepsTheEarlierReadable", func(t *testing.T) { sessionsArchive(t, o) })
	t.Run("ConcurrentAgentsKeepTheirOwn", func(t *testing.T) { sessionsConcurrent(t, o) })
	t.Run("ACancelledCallDoesNothing", func(t *testing.T) { sessionsCancelled(t, o) })
}

// line is the n-th line of agent: a chat message as JSON.
func line(agent string, n int) []byte {
	return fmt.Appendf(nil, `{"role":"user","content":"%s %d"}`, agent, n)
}

// wantLines fails unless got is want, line by line.
func wantLines(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d:\n%s", what, len(got), len(want), joinLines(got))
	}
	for i := range want {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("%s: line %d is %q, want %q", what, i+1, got[i], want[i])
		}
	}
}

func joinLines(lines [][]byte) string {
	var b strings.Builder
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func mustLines(t *testing.T, l SessionLog) [][]byte {
	t.Helper()
	got, err := l.Lines(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sessionsOrder: appends of one to three lines, from one instance and then
// from another that continues (a resumed agent), read back in order by a
// third; a missing conversation is empty.
func sessionsOrder(t *testing.T, o SessionsOpener) {
	if got := mustLines(t, o.Open(t, "nobody")); len(got) != 0 {
		t.Fatalf("a conversation never written has %d lines", len(got))
	}
	var want [][]byte
	n := 0
	for _, l := range []SessionLog{o.Open(t, "alice"), o.Open(t, "alice")} {
		for k := range 30 {
			var batch [][]byte
			for range 1 + k%3 {
				n++
				batch = append(batch, line("alice", n))
			}
			if err := l.AppendLines(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
			want = append(want, batch...)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wantLines(t, "alice's conversation", mustLines(t, o.Open(t, "alice")), want)
}

// sessionsTorn: junk stored between two appends (a crash mid-write, a
// garbled message) leaves both appended lines whole and in order; the junk
// is at most a line of its own, which the loop skips as not a message.
func sessionsTorn(t *testing.T, o SessionsOpener) {
	l := o.Open(t, "bob")
	if err := l.AppendLines(t.Context(), [][]byte{line("bob", 1)}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close() // the writer "crashed"
	o.Tear(t, "bob", []byte(`{"role":"assistant","content":"cut sh`))
	l = o.Open(t, "bob")
	if err := l.AppendLines(t.Context(), [][]byte{line("bob", 2), line("bob", 3)}); err != nil {
		t.Fatal(err)
	}
	var kept [][]byte
	for _, got := range mustLines(t, o.Open(t, "bob")) {
		if strings.Contains(string(got), "cut sh") {
			if string(got) != `{"role":"assistant","content":"cut sh` {
				t.Fatalf("the torn line was joined to another: %q", got)
			}
			continue
		}
		kept = append(kept, got)
	}
	wantLines(t, "bob's conversation around a torn line", kept, [][]byte{line("bob", 1), line("bob", 2), line("bob", 3)})
}

// sessionsArchive: an archive empties the current conversation and keeps
// the earlier one readable; archiving an empty conversation adds nothing.
func sessionsArchive(t *testing.T, o SessionsOpener) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := o.Open(t, "carol")
	if err := o.Archive(t, "carol", at); err != nil { // nothing yet
		t.Fatal(err)
	}
	if err := l.AppendLines(t.Context(), [][]byte{line("carol", 1), line("carol", 2)}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if err := o.Archive(t, "carol", at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := mustLines(t, o.Open(t, "carol")); len(got) != 0 {
		t.Fatalf("after the archive the conversation has %d lines:\n%s", len(got), joinLines(got))
	}
	if err := o.Archive(t, "carol", at.Add(2*time.Second)); err != nil { // empty: nothing to set aside
		t.Fatal(err)
	}
	l = o.Open(t, "carol")
	if err := l.AppendLines(t.Context(), [][]byte{line("carol", 3)}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "carol's fresh conversation", mustLines(t, o.Open(t, "carol")), [][]byte{line("carol", 3)})
	if err := l.AppendLines(t.Context(), [][]byte{line("carol", 4)}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if err := o.Archive(t, "carol", at.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	archived, err := o.Archived(t, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if len(archived) != 2 {
		t.Fatalf("carol has %d archived conversations, want 2", len(archived))
	}
	wantLines(t, "carol's first archived conversation", archived[0], [][]byte{line("carol", 1), line("carol", 2)})
	wantLines(t, "carol's second archived conversation", archived[1], [][]byte{line("carol", 3), line("carol", 4)})
}

// sessionsConcurrent: 8 agents append at once, each through its own
// instance; each reads back exactly its own lines in its order.
func sessionsConcurrent(t *testing.T, o SessionsOpener) {
	const agents, each = 8, 40
	logs := make([]SessionLog, agents)
	for i := range agents {
		logs[i] = o.Open(t, fmt.Sprintf("w%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				if err := logs[i].AppendLines(t.Context(), [][]byte{line(fmt.Sprintf("w%d", i), n)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range agents {
		name := fmt.Sprintf("w%d", i)
		var want [][]byte
		for n := range each {
			want = append(want, line(name, n))
		}
		wantLines(t, name+"'s conversation", mustLines(t, o.Open(t, name)), want)
	}
}

// sessionsCancelled: an append whose context is done stores nothing, and a
// read whose context is done returns its error.
func sessionsCancelled(t *testing.T, o SessionsOpener) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l := o.Open(t, "judy")
	if err := l.AppendLines(ctx, [][]byte{line("judy", 1)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with its context done: %v, want context.Canceled", err)
	}
	if err := l.AppendLines(t.Context(), [][]byte{line("judy", 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Open(t, "judy").Lines(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with its context done: %v, want context.Canceled", err)
	}
	wantLines(t, "judy's conversation", mustLines(t, o.Open(t, "judy")), [][]byte{line("judy", 2)})
}
