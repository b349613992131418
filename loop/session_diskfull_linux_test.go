package loop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// On a full disk a session write is an error wrapping ENOSPC that names the
// file; the lines before stay whole and a torn tail does not spoil the next.
func TestSessionOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	s := &session{path: filepath.Join(dir, "sessions", "alice.jsonl")}
	defer s.close()
	first := openai.ChatCompletionMessage{Role: "user", Content: "task"}
	if err := s.append(first); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 4<<20), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	big := openai.ChatCompletionMessage{Role: "assistant", Content: strings.Repeat("x", 64<<10)}
	err := s.append(big)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), s.path) {
		t.Fatalf("append on a full disk = %v, want ENOSPC naming %s", err, s.path)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	last := openai.ChatCompletionMessage{Role: "assistant", Content: "done"}
	if err := s.append(last); err != nil {
		t.Fatal(err)
	}
	got, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Content != "task" || got[1].Content != "done" {
		t.Errorf("session after the full disk: %+v", got)
	}
}
