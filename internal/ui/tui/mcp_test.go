package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/plug/mcp"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
)

// An MCP server that stops running is a note in the lead's conversation
// with why, one that runs again a note too, and the status line counts
// the servers that run.
func TestMCPServersStatesShowInTheChat(t *testing.T) {
	hs := newHarness(t, 140, 30, Options{})
	hs.send(poll.MCP{Servers: []mcp.Status{{Name: "docs", Tools: []string{"mcp__docs__search"}}, {Name: "db", Err: "exec: \"dbserver\": not found"}}})
	hs.mustSee("MCP server db is not running: exec: \"dbserver\": not found", "mcp 1/2")
	hs.mustNotSee("MCP server docs")
	hs.send(poll.MCP{Servers: []mcp.Status{{Name: "docs", Tools: []string{"mcp__docs__search"}}, {Name: "db", Tools: []string{"mcp__db__query"}}}})
	hs.mustSee("MCP server db runs again (1 tool)", "mcp 2/2")
	hs.send(poll.MCP{Servers: []mcp.Status{{Name: "docs", Err: "the server closed its connection"}, {Name: "db", Tools: []string{"mcp__db__query"}}}})
	hs.mustSee("MCP server docs is not running: the server closed its connection", "mcp 1/2")
}

// Through the binary: a configured MCP server that cannot start is said in
// the chat, and the status line counts the one that runs.
func TestAnMCPServerThatCannotStartIsSaidInTmux(t *testing.T) {
	everything := filepath.Join(os.Getenv("HOME"), ".cache", "agentteam-mcp", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(everything); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP server is not installed at %s: .ci/run installs it", everything)
		}
		t.Skipf("the MCP server is not installed at %s", everything)
	}
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("k"))
	defer srv.Close()
	conf := "[mcp.servers.everything]\ncommand = \"" + everything + "\"\n[mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n"
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "agentteam", "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " XDG_CONFIG_HOME= OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m " + bin + " chat")
	s.waitFor("the broken server said, the other counted", contains("MCP server broken is not running", "mcp 1/2"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
