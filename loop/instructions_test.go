package loop

import (
	"context"
	"errors"
	"testing"
)

// Instructions are read once at the start of each cycle, not at each
// turn, and follow the system prompt in that cycle's requests; a cycle
// with nothing to answer reads none.
func TestInstructionsAreReadAtEachCycle(t *testing.T) {
	texts := []string{"\n\nRULE ONE", "\n\nRULE TWO"}
	reads := 0
	m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "echo", `{"text":"x"}`}), final("first"), final("second")}}
	a := newAgent(t, AgentConfig{Model: m, Instructions: func() string {
		s := texts[min(reads, len(texts)-1)]
		reads++
		return s
	}}, echo("echo", false))
	_ = a.Say(t.Context(), "go")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, ErrNothingToDo) || reads != 1 {
		t.Fatalf("a cycle with nothing to do: err %v, %d reads", err, reads)
	}
	_ = a.Say(t.Context(), "again")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	want := []string{"you are alice\n\nRULE ONE", "you are alice\n\nRULE ONE", "you are alice\n\nRULE TWO"}
	if len(reqs) != len(want) || reads != 2 {
		t.Fatalf("%d requests, %d reads", len(reqs), reads)
	}
	for i, r := range reqs {
		if got := r.Messages[0].Content; got != want[i] {
			t.Errorf("request %d's system prompt %q, want %q", i, got, want[i])
		}
	}
}
