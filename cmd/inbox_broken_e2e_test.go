package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

// `agentteam inbox` lists an inbox that is a symbolic link or a directory
// as broken, in a sentence naming it, instead of leaving it out, and exits
// non-zero; the rows of sound inboxes are printed as before.
func TestInboxListsBrokenInboxes(t *testing.T) {
	ws := t.TempDir()
	if r := runBin(t, ws, nil, "", "send", "--to", "lead", "hello"); r.code != 0 {
		t.Fatalf("send: %s", r.stderr)
	}
	dir := filepath.Join(ws, ".agentteam", "inbox")
	outside := filepath.Join(t.TempDir(), ".bashrc")
	if err := os.WriteFile(outside, []byte("export A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "alice.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "bob.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}

	r := runBin(t, ws, nil, "", "inbox")
	if r.code != exit.Failure {
		t.Errorf("exit %d, want %d with broken inboxes", r.code, exit.Failure)
	}
	for _, want := range []string{
		"NAME   UNREAD  TOTAL\n",
		fmt.Sprintf("alice  broken: %s is a symbolic link", filepath.Join(dir, "alice.jsonl")),
		fmt.Sprintf("bob    broken: %s is a directory", filepath.Join(dir, "bob.jsonl")),
		"lead   1       1\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inbox listing lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "2 inboxes are broken: alice, bob") {
		t.Errorf("stderr %q does not say which inboxes are broken", r.stderr)
	}
	if got, _ := os.ReadFile(outside); string(got) != "export A=1\n" {
		t.Errorf("the file outside was changed: %q", got)
	}
}
