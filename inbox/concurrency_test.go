package inbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// drainer reads an inbox as the loop does, ReadUnread then Commit, and
// counts how often each content arrives.
type drainer struct {
	tb      testing.TB
	st      *Store
	name    string
	seen    map[string]int
	batches int
}

func (d *drainer) drain() {
	b, err := d.st.ReadUnread(d.tb.Context(), d.name)
	if err != nil {
		d.tb.Errorf("ReadUnread: %v", err)
		return
	}
	for _, bad := range b.Bad {
		d.tb.Errorf("bad line at %d: %s (%q)", bad.Offset, bad.Reason, bad.Line)
	}
	for _, m := range b.Messages {
		d.seen[m.Content]++
	}
	if !b.Empty() {
		d.batches++
	}
	if err := d.st.Commit(d.tb.Context(), d.name, b); err != nil {
		d.tb.Errorf("Commit: %v", err)
	}
}

// run drains on every wake until stop is closed; the caller drains once more after.
func (d *drainer) run(ctx context.Context, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	wake := d.st.Watch(ctx, d.name)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-wake:
				d.drain()
			}
		}
	}()
	return done
}

// check asserts that every expected content arrived exactly once and nothing else did.
func (d *drainer) check(want []string) {
	d.tb.Helper()
	for _, c := range want {
		if n := d.seen[c]; n != 1 {
			d.tb.Errorf("%q read %d times, want 1", c, n)
		}
	}
	if len(d.seen) != len(want) {
		d.tb.Errorf("read %d distinct messages, want %d", len(d.seen), len(want))
	}
	d.tb.Logf("%d messages in %d non-empty batches", len(want), d.batches)
}

// checkLines asserts the file holds exactly n lines and each is a valid message.
func checkLines(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	lines := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			break
		}
		lines++
		var m Message
		if err := json.Unmarshal(line, &m); err != nil || m.ID == "" {
			tb.Errorf("line %d is not a whole message: %v (%.80q)", lines, err, line)
		}
		if line[len(line)-1] != '\n' {
			tb.Errorf("line %d has no newline", lines)
		}
	}
	if lines != n {
		tb.Errorf("file has %d lines, want %d", lines, n)
	}
}

func TestConcurrentAppendsWhileDraining(t *testing.T) {
	const writers, per = 8, 500
	st := NewStore(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &drainer{tb: t, st: st, name: "bob", seen: map[string]int{}}
	stop := make(chan struct{})
	readerDone := d.run(ctx, stop)

	var wg sync.WaitGroup
	var want []string
	for g := range writers {
		for n := range per {
			want = append(want, content("g"+strconv.Itoa(g), n, 0))
		}
		wg.Go(func() {
			for n := range per {
				if _, err := st.Append(ctx, "bob", testMsg(content("g"+strconv.Itoa(g), n, 0))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-readerDone
	d.drain()
	d.check(want)
	checkLines(t, st.Path("bob"), writers*per)
	if has, err := st.HasUnread(ctx, "bob"); err != nil || has {
		t.Errorf("HasUnread after drain = %v, %v", has, err)
	}
}

func TestMultiProcessAppendsWhileDraining(t *testing.T) {
	const procs, per, goroutines = 4, 250, 2
	dir := t.TempDir()
	st := NewStore(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &drainer{tb: t, st: st, name: "lead", seen: map[string]int{}}
	stop := make(chan struct{})
	readerDone := d.run(ctx, stop)

	var want []string
	var children []*child
	for p := range procs {
		prefix := "p" + strconv.Itoa(p)
		for n := range per {
			want = append(want, content(prefix, n, 0))
		}
		children = append(children, startChild(t, "send", envs(envDir, dir, envName, "lead",
			envPrefix, prefix, envCount, strconv.Itoa(per))...))
	}
	for _, c := range children {
		if _, err := c.stdin.Write([]byte{1}); err != nil { // open the gate
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		prefix := "g" + strconv.Itoa(g)
		for n := range per {
			want = append(want, content(prefix, n, 0))
		}
		wg.Go(func() {
			for n := range per {
				if _, err := st.Append(ctx, "lead", testMsg(content(prefix, n, 0))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	for _, c := range children {
		c.wait(t)
	}
	wg.Wait()
	close(stop)
	<-readerDone
	d.drain()
	d.check(want)
	checkLines(t, st.Path("lead"), len(want))
}

// Big lines take many pages in the kernel; they must still land whole.
func TestMultiProcessBigMessagesStayWhole(t *testing.T) {
	const procs, per, pad = 3, 12, 200 << 10
	dir := t.TempDir()
	var children []*child
	for p := range procs {
		children = append(children, startChild(t, "send", envs(envDir, dir, envName, "bob",
			envPrefix, "p"+strconv.Itoa(p), envCount, strconv.Itoa(per), envPad, strconv.Itoa(pad))...))
	}
	for _, c := range children {
		_, _ = c.stdin.Write([]byte{1})
	}
	for _, c := range children {
		c.wait(t)
	}
	st := NewStore(dir)
	msgs, bad, err := st.ReadAll(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 || len(msgs) != procs*per {
		t.Fatalf("got %d messages and %d bad lines, want %d and 0", len(msgs), len(bad), procs*per)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		id, _, _ := strings.Cut(m.Content, "|")
		var p, n int
		if _, err := fmt.Sscanf(id, "p%d-%d", &p, &n); err != nil || m.Content != content(fmt.Sprintf("p%d", p), n, pad) || seen[id] {
			t.Errorf("message %.40q is torn or repeated", m.Content)
		}
		seen[id] = true
	}
}
