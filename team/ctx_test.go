package team

import (
	"context"
	"errors"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/tools"
)

// TestACancelledCallChangesNothing: the tool call that asked is gone (its
// context ended): a spawn, a message, a broadcast and a listing do nothing
// and say so, instead of acting for nobody.
func TestACancelledCallChangesNothing(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm := newTestTeam(t, srv, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "x", Prompt: "work"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("spawn under a cancelled context: %v", err)
	}
	if c, _ := tm.Registry().Read(t.Context()); len(c.Teammates) != 0 {
		t.Fatalf("a cancelled spawn registered %+v", c.Teammates)
	}
	if err := tm.Messenger().Send(ctx, "user", inbox.LeadName, "hello"); !errors.Is(err, context.Canceled) {
		t.Fatalf("send under a cancelled context: %v", err)
	}
	if st, _ := tm.Mailbox().Stats(ctx, inbox.LeadName); st.Total != 0 {
		t.Fatalf("a cancelled send wrote %d messages", st.Total)
	}
	if _, err := tm.Messenger().Describe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("describe under a cancelled context: %v", err)
	}
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "bob", Role: "x", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	if reached, err := tm.Messenger().Broadcast(ctx, inbox.LeadName, "all"); !errors.Is(err, context.Canceled) || len(reached) != 0 {
		t.Fatalf("broadcast under a cancelled context reached %v: %v", reached, err)
	}
}
