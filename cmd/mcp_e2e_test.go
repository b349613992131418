package cmd

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// mcpServerBin is an MCP server from npm that .ci/run installs in
// ~/.cache/agentteam-mcp; without it the test is skipped, except in CI.
func mcpServerBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("AGENTTEAM_MCP_SERVERS")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "agentteam-mcp")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP server %s is not installed in %s: .ci/run installs it", name, dir)
		}
		t.Skipf("the MCP server %s is not installed in %s (npm install --prefix %s @modelcontextprotocol/%s)", name, dir, dir, strings.TrimPrefix(name, "mcp-"))
	}
	return bin
}

// The reference MCP server's tools reach the model as mcp__everything__*,
// a call runs on the real server over stdio and its result comes back.
func TestAnMCPServersToolRunsForTheModel(t *testing.T) {
	bin := mcpServerBin(t, "mcp-server-everything")
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__echo", `{"message":"hello from the lead"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__get-env", `{}`)}},
			{Content: "echoed"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := append(fakeEnv(srv), configHome(t, "[mcp.servers.everything]\ncommand = \""+bin+"\"\n")...)
	ws := t.TempDir()

	r := runBin(t, ws, env, "", "mcp")
	if r.code != 0 || !strings.Contains(r.stdout, "everything  running") || !strings.Contains(r.stdout, "mcp__everything__echo") {
		t.Fatalf("agentteam mcp: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = runBin(t, ws, env, "", "run", "--sandbox", "off", "echo something")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 3 {
		t.Fatalf("%d requests of the lead, want 3", len(reqs))
	}
	var offered bool
	for _, tl := range reqs[0].Tools {
		offered = offered || tl.Function.Name == "mcp__everything__echo"
	}
	if !offered {
		t.Error("the lead was not offered mcp__everything__echo")
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "hello from the lead") {
		t.Errorf("the tool's result did not come back: %+v", last)
	}
	// The server's environment is the commands' allowlist: no model key.
	envOut := reqs[2].Messages[len(reqs[2].Messages)-1].Content
	if !strings.Contains(envOut, `"PATH"`) || strings.Contains(envOut, "test-key") || strings.Contains(envOut, "OPENAI_API_KEY") {
		t.Errorf("the MCP server's environment:\n%s", envOut)
	}
}

// In mode ask a server's tool is asked about as a command is (with nobody
// to ask, it does not run), unless the server marks it read-only.
func TestAnMCPToolAsksInModeAsk(t *testing.T) {
	bin := mcpServerBin(t, "mcp-server-everything")
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__toggle-simulated-logging", `{}`)}},
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__echo", `{"message":"read-only runs"}`)}},
			{Content: "refused"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := append(fakeEnv(srv), configHome(t, "[mcp.servers.everything]\ncommand = \""+bin+"\"\n")...)
	r := runBin(t, t.TempDir(), env, "", "run", "--sandbox", "off", "--permission-mode", "ask", "echo something")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 3 {
		t.Fatalf("%d requests of the lead, want 3", len(reqs))
	}
	if refused := reqs[1].Messages[len(reqs[1].Messages)-1]; refused.Role != "tool" || !strings.Contains(refused.Content, "denied") {
		t.Errorf("the call was not refused for want of an answer: %+v", refused)
	}
	if ran := reqs[2].Messages[len(reqs[2].Messages)-1]; !strings.Contains(ran.Content, "read-only runs") {
		t.Errorf("the read-only tool did not run: %+v", ran)
	}
}

// A rule names all of a server's tools at once, as Claude Code's do:
// allow mcp__everything__* lets its tools run unasked in mode ask, and a
// deny rule for one tool (hyphens and all) still refuses it.
func TestRulesNameAnMCPServersTools(t *testing.T) {
	bin := mcpServerBin(t, "mcp-server-everything")
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__toggle-simulated-logging", `{}`)}},
			{ToolCalls: []fakellm.ToolCall{call("mcp__everything__get-env", `{}`)}},
			{Content: "done"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := append(fakeEnv(srv), configHome(t, "[mcp.servers.everything]\ncommand = \""+bin+"\"\n"+
		"[permissions]\nallow = [\"mcp__everything__*\"]\ndeny = [\"mcp__everything__get-env\"]\n")...)
	r := runBin(t, t.TempDir(), env, "", "run", "--sandbox", "off", "--permission-mode", "ask", "use the server")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 3 {
		t.Fatalf("%d requests of the lead, want 3", len(reqs))
	}
	if ran := reqs[1].Messages[len(reqs[1].Messages)-1]; ran.Role != "tool" || strings.Contains(ran.Content, "denied") {
		t.Errorf("the tool mcp__everything__* allows did not run: %+v", ran)
	}
	if refused := reqs[2].Messages[len(reqs[2].Messages)-1]; !strings.Contains(refused.Content, "refused by the deny rule mcp__everything__get-env") {
		t.Errorf("the denied tool was not refused by its rule: %+v", refused)
	}
}

// A project file's MCP server is a program that would run as the person: it
// does not start before the project is trusted.
func TestAnUntrustedProjectsMCPServerDoesNotStart(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "started")
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"),
		"[mcp.servers.planted]\ncommand = \"sh\"\nargs = [\"-c\", \"touch "+marker+"\"]\n")
	r := runBin(t, ws, configHome(t, ""), "", "mcp")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the untrusted project's server ran; stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout+r.stderr, "no MCP servers are configured") {
		t.Errorf("agentteam mcp: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// The reference server over streamable HTTP (server-everything's
// streamableHttp mode): its tools reach the model from url = "…", and a
// call's result comes back through the binary.
func TestAnMCPServerOverStreamableHTTPIsATool(t *testing.T) {
	bin := mcpServerBin(t, "mcp-server-everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // the server takes the port from PORT
	srvCmd := exec.Command(bin, "streamableHttp")
	srvCmd.Env = append(os.Environ(), "PORT="+port)
	stderr, err := srvCmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srvCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srvCmd.Process.Kill(); _ = srvCmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "listening on port "+port) {
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("mcp__web__echo", `{"message":"hello over http"}`)}},
			{Content: "echoed over http"},
		},
	}, nil)
	model := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer model.Close()
	env := append(fakeEnv(model), configHome(t, "[mcp.servers.web]\nurl = \"http://127.0.0.1:"+port+"/mcp\"\n")...)
	ws := t.TempDir()
	r := runBin(t, ws, env, "", "mcp")
	if r.code != 0 || !strings.Contains(r.stdout, "web  running") || !strings.Contains(r.stdout, "mcp__web__echo") {
		t.Fatalf("agentteam mcp: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, ws, env, "", "run", "--sandbox", "off", "echo something")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "echoed over http" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := model.Requests("lead")
	if len(reqs) != 2 {
		t.Fatalf("%d requests of the lead, want 2", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != "tool" || !strings.Contains(last.Content, "hello over http") {
		t.Errorf("the tool's result did not come back: %+v", last)
	}
}
