package event

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentteam/agentteam/inbox"
)

// TestAFailedEventLogWriteIsTold: events.jsonl that cannot be written is
// said to the subscriber once (not once per event, not never), every event
// still reaches it, and once writing works again a later failure is told anew.
func TestAFailedEventLogWriteIsTold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone") // does not exist: every append fails
	var mu sync.Mutex
	var got []Event
	log := NewEventLog(filepath.Join(dir, "events.jsonl"), func(e Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	})
	msg := Delivered(inbox.Message{ID: "m1", Type: inbox.TypeMessage, From: "lead", To: "alice", Content: "hi"})
	for range 3 {
		log.Emit(Event{Payload: msg})
	}
	failures := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range got {
			if f, ok := e.Payload.(Failure); ok && strings.Contains(f.Text, "events.jsonl is not being written") {
				n++
			}
		}
		return n
	}
	if n := failures(); n != 1 {
		t.Fatalf("the failed log was told %d times, want once; events: %+v", n, got)
	}
	if !log.Failed() {
		t.Fatal("Failed() is false after failed writes")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log.Emit(Event{Payload: msg})
	if log.Failed() {
		t.Fatal("Failed() stays true after a write that worked")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	log.Emit(Event{Payload: msg})
	if n := failures(); n != 2 {
		t.Fatalf("a new failure after a good write was told %d times in all, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if delivered := len(got) - 2; delivered != 5 {
		t.Fatalf("%d events reached the subscriber, want all 5", delivered)
	}
}
