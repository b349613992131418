package tui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

func TestChatPermissionAsksAnsweredWithKeysInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{"lead": {
		{ToolCalls: []fakellm.ToolCall{{Name: "write_file", Args: `{"path":"notes.txt","content":"hello from the lead\n"}`}}},
		{Content: "wrote the notes"},
		{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"echo gone > gone.txt"}`}}},
		{Content: "was told no"},
	}}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("k"))
	defer srv.Close()
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m " + bin + " chat")
	s.waitFor("the TUI", contains("Team", "Messages"))

	s.typeLine("write the notes")
	s.waitFor("the ask with its diff and keys", contains("lead asks to run write_file notes.txt", "+hello from the lead", "allow once"))
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write ran before the person answered: %v", err)
	}
	s.run("send-keys", "-t", "e2e", "y")
	s.waitFor("the lead's answer after the write", contains("wrote the notes"))
	if got, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(got) != "hello from the lead\n" {
		t.Fatalf("notes.txt = %q, %v after y", got, err)
	}

	s.typeLine("now remove it")
	s.waitFor("the command's ask", contains("lead asks to run bash echo gone > gone.txt"))
	s.run("send-keys", "-t", "e2e", "n")
	s.waitFor("the /deny command to finish", func(screen string) bool { return strings.Contains(screen, "/deny permission-") })
	s.typeLine("not in this repo")
	s.waitFor("the lead's answer after the denial", contains("was told no"))
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied command ran: %v", err)
	}
	session, err := os.ReadFile(filepath.Join(ws, ".agentteam", "sessions", "lead.jsonl"))
	if err != nil || !strings.Contains(string(session), "permission denied by the person: not in this repo") {
		t.Errorf("the lead's conversation lacks the denial and its reason (%v)", err)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
