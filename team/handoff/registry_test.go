package handoff

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// memRegistry is a registry document in memory.
type memRegistry struct{ c registry.Config }

func (r *memRegistry) Change(_ context.Context, fn func(*registry.Config) error) error {
	next := r.c
	next.Teammates = append([]registry.Member(nil), r.c.Teammates...)
	if err := fn(&next); err != nil {
		if errors.Is(err, statefile.ErrNoChange) {
			return nil
		}
		return err
	}
	r.c = next
	return nil
}

type discard struct{}

func (discard) Emit(event.Event)   {}
func (discard) Notify(event.Event) {}

// TestRegistryKeepsTheLastHandoffs: a member's entry keeps one state per
// handoff and side, updated in place, and only the newest few.
func TestRegistryKeepsTheLastHandoffs(t *testing.T) {
	reg := &memRegistry{c: registry.Config{Teammates: []registry.Member{{Name: "alice", Role: "programmer"}}}}
	hs := New(Deps{Registry: reg, Events: discard{}, Notify: func() {}})
	n := MaxStates + 2
	for i := range n {
		h := &Handoff{id: fmt.Sprintf("handoff-%08d", i), from: "alice", to: "bob", task: "job"}
		hs.setSide(t.Context(), "alice", h, registry.HandoffSender, registry.HandoffAwaitingAccept, "")
		hs.setSide(t.Context(), "alice", h, registry.HandoffSender, registry.HandoffCompleted, "")
	}
	kept := reg.c.Teammates[0].Handoffs
	if len(kept) != MaxStates || kept[0].ID != fmt.Sprintf("handoff-%08d", n-MaxStates) || kept[len(kept)-1].ID != fmt.Sprintf("handoff-%08d", n-1) {
		t.Fatalf("kept %+v, want the last %d", kept, MaxStates)
	}
	for _, h := range kept {
		if h.State != registry.HandoffCompleted || h.Peer != "bob" || h.Role != registry.HandoffSender {
			t.Errorf("state %+v", h)
		}
	}
}
