package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandRefusesALinkedStateDir: a cloned repository ships
// .agentteam as a link to a directory elsewhere. No command reads or
// writes through it: each ends with a sentence naming the link, and the
// place it points to is left as it was.
func TestEveryCommandRefusesALinkedStateDir(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(elsewhere, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(`{"teamName":"default","teammates":[{"name":"alice","role":"x","status":"working","pid":1}]}` + "\n")
	if err := os.WriteFile(filepath.Join(elsewhere, "team", "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".agentteam")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"team"}, {"team", "--json"}, {"inbox"}, {"inbox", "alice"}, {"tasks"},
		{"send", "--to", "alice", "hi"}, {"run", "--demo", "list team"},
	} {
		r := runBin(t, ws, nil, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, "symbolic link") || !strings.Contains(r.stderr, ".agentteam") {
			t.Errorf("%v through a linked .agentteam: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	entries, _ := os.ReadDir(elsewhere)
	if len(entries) != 1 {
		t.Errorf("something was created where the link points: %v", entries)
	}
	if got, _ := os.ReadFile(filepath.Join(elsewhere, "team", "config.json")); string(got) != string(cfg) {
		t.Errorf("the registry the link points to changed:\n%s", got)
	}
}
