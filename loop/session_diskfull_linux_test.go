package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// On a full disk a session write is an error wrapping ENOSPC that names the
// file; the lines before stay whole and a torn tail does not spoil the next.
func TestSessionOnFullDisk(t *testing.T) {
	dir := testfs.SmallDisk(t, "2m", nil)
	s := &session{path: filepath.Join(dir, "sessions", "alice.jsonl")}
	defer s.close()
	first := openai.ChatCompletionMessage{Role: "user", Content: "task"}
	if err := s.append(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	filler := testfs.FillDisk(t, dir)
	big := openai.ChatCompletionMessage{Role: "assistant", Content: strings.Repeat("x", 64<<10)}
	err := s.append(t.Context(), big)
	testfs.WantENOSPC(t, "append", err, s.path)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	last := openai.ChatCompletionMessage{Role: "assistant", Content: "done"}
	if err := s.append(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	r, err := s.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := r.msgs
	if len(got) != 2 || got[0].Content != "task" || got[1].Content != "done" {
		t.Errorf("session after the full disk: %+v", got)
	}
}
