package poll

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/team/registry"
)

// The Poller reads a team kept in JetStream as it reads the files: what is
// new in the inboxes (appended by another connection, as by another
// process), the unread counts as the read position moves, the registry
// when its version moves, and nothing when nothing changed.
func TestPollerReadsAJetStreamTeam(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	open := func() (*natsstore.Mailbox, *registry.Registry) {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		mb, err := natsstore.OpenMailbox(context.Background(), nc, "tui")
		if err != nil {
			t.Fatal(err)
		}
		entries, err := natsstore.OpenEntries(context.Background(), nc, "tui", "registry", registry.DecodeRegistryEntry)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(entries.Close)
		reg, err := registry.NewRegistryOnEntries(t.Context(), entries, "tui", nil)
		if err != nil {
			t.Fatal(err)
		}
		return mb, reg
	}
	mb, reg := open()
	p := New(mb, reg, nil)
	if f, s := split(p.Poll(t.Context())); f != nil || s == nil || len(s.Config.Teammates) != 0 {
		t.Fatalf("first look at an empty team: feed %v snapshot %+v", f, s)
	}
	if out := p.Poll(t.Context()); len(out) != 0 {
		t.Fatalf("nothing changed but the Poller sent %v", out)
	}

	other, otherReg := open()
	if _, err := other.Append(t.Context(), "alice", inbox.Message{Type: "message", From: "lead", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := otherReg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "coder", Status: registry.StatusIdle})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f, snap := split(p.Poll(t.Context()))
	if f == nil || len(f.Msgs) != 1 || f.Msgs[0].Content != "hello" {
		t.Fatalf("feed %+v, want the message from the other connection", f)
	}
	if snap == nil || len(snap.Config.Teammates) != 1 || snap.Unread["alice"] != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	if out := p.Poll(t.Context()); len(out) != 0 {
		t.Fatalf("nothing changed but the Poller sent %v", out)
	}

	b, err := other.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(t.Context(), "alice", b); err != nil {
		t.Fatal(err)
	}
	f, snap = split(p.Poll(t.Context()))
	if f != nil || snap == nil || snap.Unread["alice"] != 0 {
		t.Fatalf("after alice read her inbox: feed %v snapshot %+v", f, snap)
	}
}
