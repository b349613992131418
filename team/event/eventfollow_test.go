package event

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func eventLine(t *testing.T, text string) string {
	t.Helper()
	b, err := json.Marshal(Event{Agent: "lead", Payload: Reply{Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func replies(t *testing.T, f *EventFollower) []string {
	t.Helper()
	evs, err := f.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Payload.(Reply).Text)
	}
	return out
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// A follower starts at the backlog's first whole line, hands out each
// event once, waits for a line's end, passes over what does not parse,
// and reads a log cut shorter from its start.
func TestFollowEventFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f := FollowEventFile(path, 200)
	if got := replies(t, f); len(got) != 0 {
		t.Fatalf("no file yet: %v", got)
	}
	old := strings.Repeat(eventLine(t, strings.Repeat("old ", 20)), 5)
	appendTo(t, path, old+eventLine(t, "recent"))
	if got := replies(t, f); strings.Join(got, ",") != "recent" {
		t.Fatalf("first look: %v, want only the backlog's whole lines", got)
	}
	line := eventLine(t, "split")
	appendTo(t, path, line[:10])
	if got := replies(t, f); len(got) != 0 {
		t.Fatalf("half a line: %v", got)
	}
	appendTo(t, path, line[10:]+"not json\n"+eventLine(t, "after"))
	if got := replies(t, f); strings.Join(got, ",") != "split,after" || f.Bad != 1 {
		t.Fatalf("got %v, bad %d; want split,after and one passed over", got, f.Bad)
	}
	if err := os.WriteFile(path, []byte(eventLine(t, "fresh")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := replies(t, f); strings.Join(got, ",") != "fresh" {
		t.Fatalf("a fresh log: %v", got)
	}
}

// A FIFO planted as the log is refused in a sentence, never waited on.
func TestFollowEventFileRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	_, err := FollowEventFile(path, 100).Next(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v", err)
	}
}
