package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatPopUpAndAttachmentInTmux: in the real program, "/fo" opens the
// pop-up with /focus and what it does, tab takes it; at 80×24, "@RE" and
// tab complete README.md, and on send the conversation says it was
// attached while the lead's conversation holds the file, framed.
func TestChatPopUpAndAttachmentInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo\n\nfirst line\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, ws)
	s.typeLine(bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "working 0/5, queued 0", "Messages"))

	s.run("send-keys", "-t", "e2e", "-l", "/fo")
	s.waitFor("the pop-up with /focus", contains("/focus [name]", "a teammate's conversation, typing to its inbox", "tab/enter take"))
	s.run("send-keys", "-t", "e2e", "Tab")
	s.waitFor("/focus taken and the names it takes", contains("┃ /focus", "tab/enter take"))
	s.run("send-keys", "-t", "e2e", "Enter") // /focus alone: the lead, where we are
	s.waitFor("the input empty again", contains("Talk to the lead…"))

	s.run("resize-window", "-t", "e2e", "-x", "80", "-y", "24")
	s.run("send-keys", "-t", "e2e", "-l", "@RE")
	s.waitFor("README.md in the pop-up", contains("README.md", "tab/enter take"))
	s.run("send-keys", "-t", "e2e", "Tab")
	s.waitFor("@README.md completed", contains("┃ @README.md"))
	s.typeLine("what is in it?")
	screen := s.waitFor("the attachment line", contains("@README.md what is in it?", "attached README.md (4 lines)"))
	if strings.Index(screen, "attached README.md") < strings.Index(screen, "@README.md what is in it?") {
		t.Fatalf("the attachment line is above the message:\n%s", screen)
	}

	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	session, err := os.ReadFile(filepath.Join(ws, ".agentteam", "sessions", "lead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := "@README.md what is in it?\n\n<attached_file path=\"README.md\" lines=\"4\">\n# Demo\n\nfirst line\nsecond line\n</attached_file>"
	for _, line := range strings.Split(strings.TrimSpace(string(session)), "\n") {
		var msg struct{ Role, Content string }
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("session line %q: %v", line, err)
		}
		if msg.Role == "user" && strings.Contains(msg.Content, want) {
			return
		}
	}
	t.Fatalf("the lead's conversation lacks README.md, framed:\n%s", session)
}
