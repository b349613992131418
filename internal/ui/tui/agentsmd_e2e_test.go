package tui

import (
	"os"
	"path/filepath"
	"testing"
)

// The status line names the lead's AGENTS.md files from the start; /init
// shows the prompt it says to the lead.
func TestChatShowsAgentsMDAndInitInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		filepath.Join(ws, "AGENTS.md"):                           "run the tests\n",
		filepath.Join(home, ".config", "agentteam", "AGENTS.md"): "be brief\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " " + bin + " chat --demo")
	s.waitFor("the files on the status line", contains("Messages", "AGENTS.md ×2 · sandbox"))
	s.typeLine("/init")
	s.waitFor("the prompt /init said", contains("Write an AGENTS.md file at the root of this project"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
