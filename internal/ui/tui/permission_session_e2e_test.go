package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// "Allow for this session" through the binary: the ask offers the
// command's prefix rule (git status *) as its second choice; once chosen,
// the next git status runs unasked while a git log still asks, and nothing
// is written to the project's config.
func TestAPrefixAllowedForTheSessionAsksNoMoreInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{"lead": {
		{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"git status --short"}`}}},
		{Content: "first status seen"},
		{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"git status"}`}}},
		{Content: "second status seen"},
		{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"git log -1"}`}}},
		{Content: "log seen"},
	}}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("k"))
	defer srv.Close()
	s := startTmux(t, ws)
	s.typeLine("git init -q && HOME=" + home + " OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m " + bin + " chat")
	s.waitFor("the TUI", contains("Team", "Messages"))

	s.typeLine("show the status")
	s.waitFor("the ask with its session choice", contains("lead asks to run bash git status --short", "2 s allow bash(git status *) this session"))
	s.run("send-keys", "-t", "e2e", "2")
	s.waitFor("the lead's answer after the first status", contains("first status seen"))

	s.typeLine("again")
	s.waitFor("the second status, unasked", contains("second status seen"))
	s.typeLine("and the log")
	s.waitFor("the log's ask", contains("lead asks to run bash git log -1"))
	s.run("send-keys", "-t", "e2e", "y")
	s.waitFor("the lead's answer after the log", contains("log seen"))

	if got := asksIn(t, ws); got != 2 {
		t.Errorf("the lead was asked about %d calls, want 2 (the first status and the log)", got)
	}
	for _, f := range []string{filepath.Join(ws, ".agentteam", "config.toml"), filepath.Join(ws, "agentteam.toml")} {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "git status") {
			t.Errorf("the session's rule was written to %s:\n%s", f, data)
		}
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}

// asksIn counts the permission asks in the workspace's event log.
func asksIn(t *testing.T, ws string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), `"decision":"asked"`)
}
