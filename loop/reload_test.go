package loop

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Reload reads the conversation again after replace swapped the session
// file, writes then go to the new file, and it refuses during a cycle.
func TestReloadSwapsTheConversationBetweenCycles(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "lead.jsonl"), filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, []byte(`{"role":"user","content":"from the other file"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := NewAgent(t.Context(), AgentConfig{Name: "lead", Model: &fakeModel{t: t}, SessionPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Say(t.Context(), "first"); err != nil { // opens the session file
		t.Fatal(err)
	}
	if !a.conv.start() {
		t.Fatal("no cycle started")
	}
	ran := false
	if err := a.Reload(t.Context(), func() error { ran = true; return nil }); !errors.Is(err, ErrCycleRunning) || ran {
		t.Fatalf("reload during a cycle: %v (replace ran: %v)", err, ran)
	}
	if err := a.conv.end(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(t.Context(), func() error { return os.Rename(other, path) }); err != nil {
		t.Fatal(err)
	}
	if got := a.Messages(); len(got) != 1 || got[0].Content != "from the other file" {
		t.Fatalf("conversation after reload: %+v", got)
	}
	if err := a.Say(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	b, err := NewAgent(t.Context(), AgentConfig{Name: "lead", Model: &fakeModel{t: t}, SessionPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Messages(); len(got) != 2 || got[1].Content != "second" {
		t.Fatalf("the file after reload and a write: %+v", got)
	}
}
