package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatCopyAndLongPasteInTmux: in the real program under tmux (which
// takes OSC 52 into a paste buffer with set-clipboard on), /copy puts the
// lead's last reply on the clipboard; a bracketed paste of 30 lines shows
// as "[pasted 30 lines]" and reaches the lead whole.
func TestChatCopyAndLongPasteInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	s := startTmux(t, ws)
	s.run("set-option", "-s", "set-clipboard", "on")
	s.typeLine(bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "working 0/5, queued 0", "Messages"))

	s.typeLine("list team")
	s.waitFor("the lead's answer", contains("list the team:", "lead · idle"))
	s.typeLine("/copy")
	s.waitFor("the copy confirmed", contains("copied the lead's last reply"))
	buf := s.run("show-buffer")
	if !strings.Contains(buf, "list the team:") {
		t.Fatalf("tmux's buffer after /copy is %q, want the lead's reply", buf)
	}

	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "pasted row %02d\n", i)
	}
	file := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(file, []byte(strings.TrimSuffix(b.String(), "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s.run("load-buffer", "-b", "long", file)
	s.run("paste-buffer", "-p", "-b", "long", "-t", "e2e") // -p: bracketed, as a terminal pastes
	screen := s.waitFor("the collapsed paste", contains("[pasted 30 lines]"))
	if strings.Contains(screen, "pasted row 02") {
		t.Fatalf("the paste shows whole in the input:\n%s", screen)
	}
	s.run("send-keys", "-t", "e2e", "Enter")
	s.waitFor("the paste sent whole", contains("pasted row 01", "pasted row 30"))

	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
