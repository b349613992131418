package poll

import (
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/registry"
)

func split(msgs []tea.Msg) (*Feed, *Snapshot) {
	var f *Feed
	var s *Snapshot
	for _, m := range msgs {
		switch m := m.(type) {
		case Feed:
			f = &m
		case Snapshot:
			s = &m
		}
	}
	return f, s
}

func TestPollerReadsOnlyWhatIsNew(t *testing.T) {
	dir := t.TempDir()
	store := inbox.NewStore(filepath.Join(dir, "inbox"))
	reg := registry.NewRegistry(filepath.Join(dir, "team", "config.json"), "")
	p := New(store, reg, func() int { return 42 })

	f, s := split(p.Poll(t.Context()))
	if f != nil || s == nil || len(s.Config.Teammates) != 0 || s.LeadTokens != 42 {
		t.Fatalf("first look at an empty team: feed %v snapshot %+v", f, s)
	}
	if out := p.Poll(t.Context()); len(out) != 0 {
		t.Fatalf("nothing changed but the Poller sent %v", out)
	}

	base := time.Now().UTC()
	mustAppend(t, store, "alice", inbox.Message{Type: "message", From: "lead", Content: "second", Timestamp: base.Add(2 * time.Millisecond)})
	mustAppend(t, store, "lead", inbox.Message{Type: "result", From: "bob", Content: "first", Timestamp: base.Add(time.Millisecond)})
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "coder", Status: registry.StatusIdle})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f, s = split(p.Poll(t.Context()))
	if f == nil || len(f.Msgs) != 2 || f.Msgs[0].Content != "first" || f.Msgs[1].Content != "second" {
		t.Fatalf("feed %+v, want first then second by time", f)
	}
	if s == nil || len(s.Config.Teammates) != 1 || s.Unread["alice"] != 1 || s.Unread["lead"] != 1 {
		t.Fatalf("snapshot %+v", s)
	}

	// A message from another process (another Store on the same directory).
	other := inbox.NewStore(filepath.Join(dir, "inbox"))
	mustAppend(t, other, "alice", inbox.Message{Type: "message", From: "user", Content: "third"})
	f, s = split(p.Poll(t.Context()))
	if f == nil || len(f.Msgs) != 1 || f.Msgs[0].Content != "third" {
		t.Fatalf("feed %+v, want only the new message", f)
	}
	if s == nil || s.Unread["alice"] != 2 {
		t.Fatalf("alice's unread count is not updated: %+v", s)
	}

	// Reading marks messages read: the count follows the cursor.
	batch, err := store.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(t.Context(), "alice", batch); err != nil {
		t.Fatal(err)
	}
	_, s = split(p.Poll(t.Context()))
	if s == nil || s.Unread["alice"] != 0 {
		t.Fatalf("after alice read her inbox: %+v", s)
	}
}

func mustAppend(t *testing.T, s *inbox.Store, name string, m inbox.Message) {
	t.Helper()
	if _, err := s.Append(t.Context(), name, m); err != nil {
		t.Fatal(err)
	}
}

// TestFeedPutsARequestBeforeItsAnswer: after --resume the first poll reads
// every inbox at once. zed's answer (in lead.jsonl) and the lead's request
// (in zed.jsonl) share a millisecond: the request is listed first, whatever
// the inboxes' names.
func TestFeedPutsARequestBeforeItsAnswer(t *testing.T) {
	dir := t.TempDir()
	store := inbox.NewStore(filepath.Join(dir, "inbox"))
	reg := registry.NewRegistry(filepath.Join(dir, "team", "config.json"), "")
	at := time.Now().UTC().Truncate(time.Millisecond)
	mustAppend(t, store, "zed", inbox.Message{Type: "shutdown_request", From: "lead", Content: "please stop", CorrelationID: "shutdown-1", Timestamp: at})
	mustAppend(t, store, "lead", inbox.Message{Type: "shutdown_response", From: "zed", Content: "stopping", CorrelationID: "shutdown-1", Timestamp: at})
	p := New(store, reg, nil)
	f, _ := split(p.Poll(t.Context()))
	if f == nil || len(f.Msgs) != 2 || f.Msgs[0].Type != "shutdown_request" {
		t.Fatalf("feed %+v, want the request before its answer", f)
	}
}
