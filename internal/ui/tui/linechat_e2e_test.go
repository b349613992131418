package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a real terminal with TERM=dumb, chat runs in lines (internal/ui/linechat):
// the terminal echoes what is typed, ctrl+c at the prompt asks for a second,
// ctrl+d ends the chat with exit 0, and no escape sequence reaches the pane.
func TestChatInLinesOnADumbTerminalInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	s := startTmux(t, ws)
	s.typeLine("TERM=dumb " + bin + " chat --demo")
	s.waitFor("the line chat", contains("agentteam chat in lines (TERM is dumb)", "lead>"))

	raw := filepath.Join(t.TempDir(), "pane.raw")
	s.run("pipe-pane", "-t", "e2e", "-o", "cat >> "+raw) // every byte chat writes to the terminal
	s.typeLine("spawn alice as programmer")
	s.waitFor("the answer and alice's spawn line", contains("spawn alice (programmer) on demo", "- spawn alice as programmer: done"))
	s.typeLine("/team")
	s.waitFor("the registry", contains("alice  programmer"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the second ctrl+c asked for", contains("(ctrl+c again leaves)"))
	s.typeLine("list team") // a line disarms: the chat goes on
	s.waitFor("the second answer", contains("- list the team:"))
	s.run("pipe-pane", "-t", "e2e") // stop before the shell's own prompt comes back

	s.run("send-keys", "-t", "e2e", "C-d")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	s.typeLine("echo chat-exit=$?")
	s.waitFor("chat's exit code", contains("chat-exit=0"))

	out, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "- list the team:") {
		t.Fatalf("the pane's recording missed the chat:\n%q", out)
	}
	if strings.Contains(string(out), "\x1b") {
		t.Fatalf("the line chat wrote an escape sequence:\n%q", out)
	}
}
