package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// serveEnv is the environment of `agentteam mcp serve` under test: the
// clean one, the fake model's, no race-exit sleep.
func serveEnv(srv *fakellm.Server) []string {
	return append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), fakeEnv(srv)...)
}

// serveHTTP starts `agentteam mcp serve --http 127.0.0.1:0` in ws and
// returns its endpoint; the server is stopped (SIGTERM) when the test ends.
func serveHTTP(t *testing.T, ws string, env []string, args ...string) string {
	t.Helper()
	url, _ := startServeHTTP(t, ws, env, args...)
	return url
}

// startServeHTTP is serveHTTP that also returns stop: it sends SIGTERM,
// waits for the process to end and returns its stderr.
func startServeHTTP(t *testing.T, ws string, env []string, args ...string) (url string, stop func() string) {
	t.Helper()
	c := exec.Command(binary(t), append([]string{"mcp", "serve", "--http", "127.0.0.1:0", "--sandbox", "off"}, args...)...)
	c.Dir, c.Env = ws, env
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	var said strings.Builder
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			said.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := regexp.MustCompile(`at (http://\S+/mcp)$`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var once sync.Once
	stop = func() string {
		once.Do(func() {
			_ = c.Process.Signal(syscall.SIGTERM)
			select {
			case <-done: // stderr read to its end before Wait closes it
			case <-time.After(30 * time.Second):
				t.Errorf("agentteam mcp serve had not ended 30s after SIGTERM")
				_ = c.Process.Kill()
				<-done
			}
			_ = c.Wait()
		})
		mu.Lock()
		defer mu.Unlock()
		return said.String()
	}
	t.Cleanup(func() {
		if s := stop(); strings.Contains(s, "panic:") || strings.Contains(s, "DATA RACE") {
			t.Errorf("agentteam mcp serve:\n%s", s)
		}
	})
	select {
	case u := <-urls:
		return u, stop
	case <-done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("agentteam mcp serve --http ended before it listened:\n%s", said.String())
	case <-time.After(60 * time.Second):
		t.Fatal("agentteam mcp serve --http did not say where it listens")
	}
	return "", stop
}

// teamScript: the lead spawns alice, who writes a file (an ask in mode ask,
// which the client answers) and reports; the lead then answers.
func teamScript() *fakellm.Server {
	return fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write hello.txt"}`)}},
			{Content: "alice is on it"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"hello.txt","content":"hello from alice\n"}`)}},
			{Content: "alice done: wrote hello.txt"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{Content: c.Agent + ": all set, hello.txt is written"}
	}), fakellm.WithAPIKey("test-key"))
}

// The team as an MCP server, driven by the official Go SDK's client over
// stdio and over streamable HTTP: the tools are listed, team_run runs a
// team that spawns a teammate, progress notifications arrive while it
// works, the client answers the teammate's permission ask from one of
// them, the answer comes back, and the registry reads as the CLI's.
func TestMCPServeRunsTheTeamForAnMCPClient(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			srv := teamScript()
			defer srv.Close()
			ws := t.TempDir()
			env := serveEnv(srv)
			var tr sdkmcp.Transport
			if transport == "stdio" {
				c := exec.Command(binary(t), "mcp", "serve", "--sandbox", "off")
				c.Dir, c.Env, c.Stderr = ws, env, io.Discard
				tr = &sdkmcp.CommandTransport{Command: c}
			} else {
				tr = &sdkmcp.StreamableClientTransport{Endpoint: serveHTTP(t, ws, env)}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()

			var mu sync.Mutex
			var progress []string
			asks := make(chan string, 1)
			askID := regexp.MustCompile(`team_answer \(id (\S+)\)`)
			client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, &sdkmcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Message)
					mu.Unlock()
					if m := askID.FindStringSubmatch(req.Params.Message); m != nil {
						asks <- m[1]
					}
				},
			})
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatalf("connect over %s: %v", transport, err)
			}
			defer cs.Close()

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"team_run", "team_send", "team_status", "team_inbox", "team_tasks", "team_requests", "team_answer"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			params := &sdkmcp.CallToolParams{Name: "team_run", Arguments: map[string]any{"prompt": "have alice write hello.txt", "timeout_seconds": 60}}
			params.SetProgressToken("run-1")
			type called struct {
				res *sdkmcp.CallToolResult
				err error
			}
			ran := make(chan called, 1)
			go func() {
				res, err := cs.CallTool(ctx, params)
				ran <- called{res, err}
			}()
			var results []*sdkmcp.CallToolResult
			select {
			case id := <-asks:
				// The ask is the team's, under its locks: another process
				// lists it while team_run waits, then the client answers.
				r := runBin(t, ws, fakeEnv(srv), "", "requests", "--json")
				if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "hello.txt") {
					t.Errorf("agentteam requests in another process: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				a, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_answer", Arguments: map[string]any{"id": id, "approve": true}})
				if err != nil || a.IsError {
					t.Fatalf("team_answer: %v %s", err, text(a))
				}
				results = append(results, a)
			case c := <-ran:
				t.Fatalf("team_run ended before alice asked: %v %s", c.err, text(c.res))
			}
			c := <-ran
			if c.err != nil {
				t.Fatal(c.err)
			}
			res := c.res
			results = append(results, res)
			if res.IsError || !strings.Contains(text(res), "all set, hello.txt is written") {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("team_run: %s\nprogress:\n%s", text(res), strings.Join(progress, "\n"))
			}
			if data, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(data) != "hello from alice\n" {
				t.Errorf("hello.txt after the approved write: %q, %v", data, err)
			}
			mu.Lock()
			joined := strings.Join(progress, "\n")
			mu.Unlock()
			for _, want := range []string{"alice", "write_file"} {
				if !strings.Contains(joined, want) {
					t.Errorf("the progress notifications do not mention %q:\n%s", want, joined)
				}
			}

			status, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_status", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, status)
			var reg struct {
				Teammates []struct{ Name, Role, Status string }
			}
			if err := json.Unmarshal([]byte(text(status)), &reg); err != nil || len(reg.Teammates) != 1 || reg.Teammates[0].Name != "alice" || reg.Teammates[0].Status != "shutdown" {
				t.Errorf("team_status: %v\n%s", err, text(status))
			}
			board, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: "agentteam://team/registry"})
			if err != nil || len(board.Contents) != 1 || !strings.Contains(board.Contents[0].Text, `"alice"`) {
				t.Errorf("the registry resource: %v %+v", err, board)
			}
			inbox, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_inbox", Arguments: map[string]any{"name": "lead"}})
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, inbox)
			if !strings.Contains(text(inbox), "alice done: wrote hello.txt") {
				t.Errorf("team_inbox lead: %s", text(inbox))
			}
			// The model key is the server's, never the client's.
			for _, r := range results {
				if strings.Contains(text(r), "test-key") {
					t.Errorf("a tool result carries the model key: %s", text(r))
				}
			}
			noViolations(t, srv)
		})
	}
}

// text is a tool result's text content.
func text(r *sdkmcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdkmcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// --http listens on loopback only, unless told: the client may run the
// team and answer its asks.
func TestMCPServeRefusesANonLoopbackAddress(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "", "mcp", "serve", "--http", "0.0.0.0:0")
	if r.code != exit.Usage || !strings.Contains(r.stderr, "beyond this machine") || !strings.Contains(r.stderr, "--allow-any-host") {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// inspector runs the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli)
// with args and returns the JSON it printed. Its 1.0.3 finds its own
// package.json only where ../package.json exists from its working
// directory, so it runs in a directory that has one above it.
func inspector(t *testing.T, bin string, env []string, args ...string) map[string]any {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "package.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, bin, dir, env, "", nil, append([]string{"--cli"}, args...)...)
	out := r.stdout
	if i := strings.Index(out, "{"); i >= 0 {
		out = out[i:]
	}
	var v map[string]any
	if r.code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("mcp-inspector-cli %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return v
}

// The MCP Inspector's CLI, a client agentteam did not write, lists the
// tools over stdio and runs the team over streamable HTTP.
func TestMCPServeAnswersTheMCPInspector(t *testing.T) {
	bin := mcpServerBin(t, "mcp-inspector-cli")
	srv := teamScript()
	defer srv.Close()
	ws := t.TempDir()
	var e []string // the inspector starts a stdio server with only the variables -e gives it
	for _, kv := range append(fakeEnv(srv), "HOME="+testHome) {
		e = append(e, "-e", kv)
	}
	list := inspector(t, bin, nil, append(e, binary(t), "--workspace", ws, "mcp", "serve", "--sandbox", "off", "--method", "tools/list")...)
	data, _ := json.Marshal(list["tools"])
	for _, want := range []string{`"team_run"`, `"team_answer"`, `"team_status"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("tools/list lacks %s: %s", want, data)
		}
	}

	// Over HTTP, in mode auto-edit: the inspector cannot answer an ask
	// while its one call waits.
	url := serveHTTP(t, ws, serveEnv(srv), "--permission-mode", "auto-edit")
	res := inspector(t, bin, nil, url, "--transport", "http", "--method", "tools/call",
		"--tool-name", "team_run", "--tool-arg", "prompt=have alice write hello.txt")
	data, _ = json.Marshal(res)
	if res["isError"] == true || !strings.Contains(string(data), "all set, hello.txt is written") {
		t.Fatalf("tools/call team_run: %s", data)
	}
	res = inspector(t, bin, nil, url, "--transport", "http", "--method", "tools/call", "--tool-name", "team_status")
	if data, _ = json.Marshal(res); !strings.Contains(string(data), `\"name\": \"alice\"`) {
		t.Errorf("tools/call team_status: %s", data)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(b) != "hello from alice\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
}

// nodeOptions is NODE_OPTIONS for the conformance suite: on a Node.js
// without fs.globSync (before 22) a shim in testdata/node20 provides it.
func nodeOptions(t *testing.T) string {
	t.Helper()
	if exec.Command("node", "-e", "process.exit(require('fs').globSync ? 0 : 1)").Run() == nil {
		return ""
	}
	shim, err := filepath.Abs(filepath.Join("testdata", "node20", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return "--import " + shim
}

// The official conformance suite in server mode passes against
// `agentteam mcp serve --http`, but for the scenarios listed, with why, in
// testdata/mcp-conformance-server-expected.yml (docs/mcp.md).
func TestMCPServePassesTheConformanceSuite(t *testing.T) {
	bin := mcpServerBin(t, "conformance")
	srv := teamScript()
	defer srv.Close()
	url := serveHTTP(t, t.TempDir(), serveEnv(srv))
	expected, err := filepath.Abs(filepath.Join("testdata", "mcp-conformance-server-expected.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, bin, t.TempDir(), []string{"NODE_OPTIONS=" + nodeOptions(t)}, "", nil,
		"server", "--url", url, "--expected-failures", expected)
	if r.code != 0 || !strings.Contains(r.stdout, "all failures are expected") {
		t.Fatalf("conformance server: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// stdioClient connects the Go SDK's client to `agentteam mcp serve` in ws.
func stdioClient(t *testing.T, ctx context.Context, ws string, env []string) *sdkmcp.ClientSession {
	t.Helper()
	c := exec.Command(binary(t), "mcp", "serve", "--sandbox", "off")
	c.Dir, c.Env, c.Stderr = ws, env, io.Discard
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, &sdkmcp.CommandTransport{Command: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A team_run while another process runs the team (a chat, a run) is one
// sentence, and the readers still answer.
func TestMCPServeTeamRunWhileAnotherProcessRunsTheTeam(t *testing.T) {
	srv := teamScript()
	defer srv.Close()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".agentteam", "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	owner := flock.New(filepath.Join(ws, ".agentteam", "team", "owner.lock"))
	if ok, err := owner.TryLock(); !ok || err != nil {
		t.Fatalf("take the owner lock: %v %v", ok, err)
	}
	defer owner.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := stdioClient(t, ctx, ws, serveEnv(srv))
	res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_run", Arguments: map[string]any{"prompt": "anything"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "already running the team in this workspace") {
		t.Errorf("team_run: %s", text(res))
	}
	if n := len(srv.Requests("lead")); n != 0 {
		t.Errorf("the lead was asked %d times", n)
	}
	st, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_status", Arguments: map[string]any{}})
	if err != nil || st.IsError {
		t.Errorf("team_status: %v %s", err, text(st))
	}
}

// A teammate in plan mode waits for a review; the client approves the plan
// with team_answer while team_run runs, and the teammate goes on to write.
func TestMCPServeAnswersATeammatesPlan(t *testing.T) {
	reviewed := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		last := msgs[len(msgs)-1]
		tool := func(name, args string) fakellm.Reply {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call(name, args)}}
		}
		if c.Agent == "alice" {
			switch {
			case last.Role == "tool" && strings.Contains(last.Content, "Wrote"):
				return fakellm.Reply{Content: "alice done: wrote hello.txt"}
			case last.Role == "tool" && strings.Contains(last.Content, "plan mode"):
				return tool("submit_plan", `{"plan":"write hello.txt in one step"}`)
			case last.Role == "tool" && strings.Contains(last.Content, "Plan submitted"):
				return fakellm.Reply{Content: "alice: plan submitted, waiting"}
			}
			return tool("write_file", `{"path":"hello.txt","content":"hello from alice\n"}`)
		}
		switch {
		case c.N == 0:
			return tool("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write hello.txt","plan_mode":true}`)
		case last.Role != "tool" && strings.Contains(last.Content, "write hello.txt in one step"):
			// The lead leaves the plan to the person: its turn ends once
			// the person has reviewed it, so the team cannot settle before.
			select {
			case <-reviewed:
			case <-time.After(60 * time.Second):
			}
			return fakellm.Reply{Content: "lead: the person reviews the plan"}
		}
		return fakellm.Reply{Content: "lead: all set"}
	}, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	plans := make(chan struct{}, 1)
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			if strings.Contains(req.Params.Message, "plan_approval_request") {
				select {
				case plans <- struct{}{}:
				default:
				}
			}
		},
	})
	c := exec.Command(binary(t), "mcp", "serve", "--sandbox", "off", "--permission-mode", "auto-edit")
	c.Dir, c.Env, c.Stderr = ws, serveEnv(srv), io.Discard
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	ran := make(chan *sdkmcp.CallToolResult, 1)
	go func() {
		params := &sdkmcp.CallToolParams{Name: "team_run", Arguments: map[string]any{"prompt": "have alice write hello.txt, with a plan first"}}
		params.SetProgressToken(7)
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			res = &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: err.Error()}}}
		}
		ran <- res
	}()
	select {
	case <-plans:
	case res := <-ran:
		t.Fatalf("team_run ended before alice's plan: %s", text(res))
	}
	ans, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_answer", Arguments: map[string]any{"plan": "alice", "approve": true, "reason": "go ahead"}})
	close(reviewed)
	if err != nil || ans.IsError {
		t.Fatalf("team_answer plan: %v %s", err, text(ans))
	}
	if res := <-ran; res.IsError || !strings.Contains(text(res), "lead: all set") {
		t.Fatalf("team_run: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(b) != "hello from alice\n" {
		t.Errorf("hello.txt after the approved plan: %q, %v", b, err)
	}
	// Without a running team there is no plan to review: one sentence.
	ans, err = cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_answer", Arguments: map[string]any{"plan": "alice", "approve": true}})
	if err != nil || !ans.IsError || !strings.Contains(text(ans), "no team_run is running") {
		t.Errorf("team_answer plan after the run: %v %s", err, text(ans))
	}
}

// A web page the person visits cannot drive the team through --http: a
// browser's cross-origin POST, and one that rebinds a name to 127.0.0.1,
// are refused before any tool runs.
func TestMCPServeRefusesABrowsersCrossOriginRequest(t *testing.T) {
	srv := teamScript()
	defer srv.Close()
	url := serveHTTP(t, t.TempDir(), serveEnv(srv))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	for _, c := range []struct {
		name    string
		headers map[string]string
	}{
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}},
		{"origin only", map[string]string{"Origin": "http://evil.example"}},
		{"rebound host", map[string]string{"Host": "evil.example"}},
	} {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.headers {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", c.name, resp.StatusCode)
		}
	}
	if n := len(srv.Requests("lead")); n != 0 {
		t.Errorf("the lead was asked %d times", n)
	}
}

// SIGTERM while team_run runs interrupts the team and the server ends once
// it has closed: the registry says no teammate is still working, and the
// workspace is free for the next run.
func TestMCPServeStopsARunningTeamOnSIGTERM(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			if c.N == 0 {
				close(asked)
			}
			select { // alice's turn lasts until the test is done with her
			case <-release:
			case <-time.After(60 * time.Second):
			}
			return fakellm.Reply{Content: "alice: too late"}
		}
		if c.N == 0 {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"take your time"}`)}}
		}
		return fakellm.Reply{Content: "lead: waiting for alice"}
	}, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for alice's turn
	ws := t.TempDir()
	url, stop := startServeHTTP(t, ws, serveEnv(srv))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ran := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "team_run", Arguments: map[string]any{"prompt": "have alice take her time"}})
		ran <- err
	}()
	select {
	case <-asked:
	case err := <-ran:
		t.Fatalf("team_run ended before alice's turn: %v", err)
	}
	said := stop()
	<-ran
	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "team", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Teammates []struct{ Name, Status string }
	}
	if err := json.Unmarshal(data, &reg); err != nil || len(reg.Teammates) != 1 {
		t.Fatalf("registry: %v\n%s", err, data)
	}
	if st := reg.Teammates[0].Status; st == "working" || st == "queued" {
		t.Errorf("alice is %s after the server ended:\n%s", st, said)
	}
	owner := flock.New(filepath.Join(ws, ".agentteam", "team", "owner.lock"))
	if ok, err := owner.TryLock(); !ok || err != nil {
		t.Errorf("the owner lock is still held after the server ended: %v %v", ok, err)
	}
	_ = owner.Unlock()
}

// The readers and team_send are the CLI's commands: a message sent reads
// back from the inbox as a tool and as a resource, the board and the asks
// are JSON, and a bad input is one sentence as the command says it.
func TestMCPServeSendsAndReadsAsTheCLIDoes(t *testing.T) {
	srv := teamScript()
	defer srv.Close()
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := stdioClient(t, ctx, ws, serveEnv(srv))
	callTool := func(name string, args map[string]any) *sdkmcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	if r := callTool("team_send", map[string]any{"to": "lead", "content": "please review the README"}); r.IsError || !strings.Contains(text(r), `"to": "lead"`) && !strings.Contains(text(r), `"to":"lead"`) {
		t.Fatalf("team_send: %s", text(r))
	}
	if r := callTool("team_inbox", map[string]any{"name": "lead"}); r.IsError || !strings.Contains(text(r), "please review the README") || !strings.Contains(text(r), `"from": "user"`) {
		t.Errorf("team_inbox lead: %s", text(r))
	}
	res, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: "agentteam://team/inbox/lead"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "please review the README") {
		t.Errorf("the lead's inbox as a resource: %v %+v", err, res)
	}
	if _, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: "agentteam://team/inbox/..%2Fetc"}); err == nil {
		t.Error("a resource name outside the inboxes was read")
	}
	if r := callTool("team_tasks", map[string]any{}); r.IsError || !strings.Contains(text(r), `"tasks"`) {
		t.Errorf("team_tasks: %s", text(r))
	}
	if r := callTool("team_requests", map[string]any{}); r.IsError || strings.TrimSpace(text(r)) != "[]" {
		t.Errorf("team_requests: %s", text(r))
	}
	if r := callTool("team_send", map[string]any{"to": "lead", "content": "hi", "from": "lead"}); !r.IsError || !strings.Contains(text(r), "that is an agent's name") {
		t.Errorf("team_send from the lead: %s", text(r))
	}
	if r := callTool("team_answer", map[string]any{"id": "permission-00000000", "approve": true}); !r.IsError || !strings.Contains(text(r), "no permission ask") {
		t.Errorf("team_answer of no ask: %s", text(r))
	}
	if r := callTool("team_answer", map[string]any{"id": "permission-00000000", "approve": false}); !r.IsError || !strings.Contains(text(r), "needs a reason") {
		t.Errorf("team_answer deny without a reason: %s", text(r))
	}
}
