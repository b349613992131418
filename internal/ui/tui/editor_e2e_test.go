package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// ctrl+x ctrl+e opens the input in the person's $EDITOR with what was
// typed so far; what the editor saves is the input, and enter sends it.
func TestTheInputIsWrittenInTheEditorInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	editor := filepath.Join(home, "ed.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf '\\nsecond line from the editor\\n' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "got it"}), fakellm.WithAPIKey("k"))
	defer srv.Close()
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " EDITOR=" + editor + " VISUAL= OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m " + bin + " chat")
	s.waitFor("the TUI", contains("Team", "Messages"))
	s.run("send-keys", "-t", "e2e", "-l", "first line typed")
	s.run("send-keys", "-t", "e2e", "C-x")
	s.run("send-keys", "-t", "e2e", "C-e")
	s.waitFor("the editor's text in the input", contains("second line from the editor", "enter sends it"))
	s.run("send-keys", "-t", "e2e", "Enter")
	s.waitFor("the lead's answer", contains("got it"))
	reqs := srv.Requests("lead")
	if len(reqs) == 0 {
		t.Fatal("the lead got no request")
	}
	var said string
	for _, m := range reqs[0].Messages {
		if m.Role == "user" {
			said = m.Content
		}
	}
	if !strings.Contains(said, "first line typed\nsecond line from the editor") {
		t.Fatalf("the lead was told %q, want both lines", said)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
