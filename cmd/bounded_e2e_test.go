package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// A model that sends a tool call past the bound on arguments: nothing of it
// runs or is stored, the model is told the bound, and its next, smaller
// call runs. No file, session line or later request carries the big one.
func TestAToolCallPastItsBoundIsCutAndTheModelIsTold(t *testing.T) {
	huge := strings.Repeat("x", 3<<20)
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"big.txt","content":"`+huge+`"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"small.txt","content":"in parts\n"}`)}},
			{Content: "wrote it in parts"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "write a big file")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "wrote it in parts" {
		t.Errorf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "passed agentteam's bound of 1 MiB") {
		t.Errorf("stderr does not say the reply was cut at its bound:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("the cut call ran: big.txt %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "small.txt")); err != nil {
		t.Errorf("the smaller call after it did not run: %v", err)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 3 {
		t.Fatalf("%d requests of the lead, want 3", len(reqs))
	}
	var told bool
	for _, m := range reqs[1].Messages {
		if len(m.Content) > 64<<10 || (len(m.ToolCalls) > 0 && len(m.ToolCalls[0].Function.Arguments) > 64<<10) {
			t.Fatalf("the request after the cut carries %d bytes of a message", len(m.Content)+len(m.ToolCalls[0].Function.Arguments))
		}
		told = told || (m.Role == "tool" && strings.Contains(m.Content, "not run") && strings.Contains(m.Content, "1 MiB"))
	}
	if !told {
		t.Error("the model was not told why its call did not run")
	}
	// No state file holds a line anywhere near the call's size.
	filepath.Walk(filepath.Join(ws, ".agentteam"), func(path string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if n := len(sc.Bytes()); n > 256<<10 {
				t.Errorf("%s has a line of %d bytes", path, n)
			}
		}
		return nil
	})
}

// chatty answers every call with a hundred tool calls whose progress lines
// are long, so that a stderr nobody reads fills within a few turns.
func chatty() fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		var calls []fakellm.ToolCall
		for i := range 100 {
			calls = append(calls, call("read_file", fmt.Sprintf(`{"path":"%s-%d.txt"}`, strings.Repeat("p", 150), i)))
		}
		return fakellm.Reply{ToolCalls: calls}
	}
}

// startUnread starts the binary with its stderr a pipe nobody reads.
func startUnread(t *testing.T, srv *fakellm.Server, args ...string) (*exec.Cmd, time.Time) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c := exec.Command(binary(t), args...)
	c.Dir = t.TempDir()
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0"), fakeEnv(srv)...)
	c.Stdout, c.Stderr = io.Discard, w
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { c.Process.Kill() })
	return c, start
}

// waitExit waits at most limit for c to end, and returns its exit code.
func waitExit(t *testing.T, c *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		c.Process.Kill()
		<-done
		t.Fatalf("agentteam %v had not ended after %s", c.Args[1:], limit)
		return -1
	}
}

// A --timeout is a promise even when the run is stuck writing progress to a
// stderr nobody reads.
func TestRunTimeoutHoldsWithAStderrNobodyReads(t *testing.T) {
	srv := fakellm.New(chatty(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	c, start := startUnread(t, srv, "run", "--timeout", "5s", "--sandbox", "off", "read everything")
	// 5 s, the grace, and room for a race-built binary's start on a busy machine.
	code := waitExit(t, c, 10*time.Second)
	if code != exit.Timeout {
		t.Errorf("exit %d after %s, want %d (timeout)", code, time.Since(start).Round(time.Millisecond), exit.Timeout)
	}
	if srv.CallsFor("lead") < 2 {
		t.Errorf("the lead made %d model calls: the run never got going", srv.CallsFor("lead"))
	}
}

// A second Ctrl-C ends the process at once, even when the clean end the
// first asked for is stuck.
func TestASecondInterruptStopsAStuckRunAtOnce(t *testing.T) {
	srv := fakellm.New(chatty(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	c, _ := startUnread(t, srv, "run", "--sandbox", "off", "read everything")
	// Stuck: the lead's calls have stopped, its progress lines filling the pipe.
	// Not testkit: a second without a call is timed, and past the bound the
	// test goes on, the first interrupt telling whether the run is stuck.
	deadline := time.Now().Add(30 * time.Second)
	for last, since := -1, time.Now(); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n := srv.CallsFor("lead"); n != last {
			last, since = n, time.Now()
		} else if n >= 2 && time.Since(since) > time.Second {
			break
		}
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { // no t here: the test may have ended when Wait returns
		err := c.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	select {
	case code := <-done:
		t.Fatalf("the run ended (exit %d) at the first interrupt: nothing was stuck, so this test proves nothing", code)
	case <-time.After(time.Second): // its clean end had its chance, and is stuck
	}
	// Interrupts again until it ends: one that comes before the first is
	// taken would be the first's, not a second.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(3 * time.Second)
	for {
		select {
		case code := <-done:
			if code != exit.Failure {
				t.Errorf("exit %d after the second interrupt, want %d", code, exit.Failure)
			}
			return
		case <-tick.C:
			_ = c.Process.Signal(os.Interrupt)
		case <-limit:
			t.Fatal("a second interrupt did not end the stuck run within 3 s")
		}
	}
}

// pingPongScript has the lead spawn alice and bob, who then answer every
// message of the other's with the same one: a loop only a bound ends.
func pingPongScript() fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		last := msgs[len(msgs)-1]
		switch {
		case c.Agent == "lead" && c.N == 0:
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"player","prompt":"play ping with bob"}`),
				call("spawn_teammate", `{"name":"bob","role":"player","prompt":"wait for alice"}`),
			}}
		case c.Agent == "lead":
			return fakellm.Reply{Content: "noted"}
		case last.Role == "tool":
			return fakellm.Reply{Content: "sent"}
		case c.Agent == "alice":
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"bob","content":"ping, your turn"}`)}}
		default:
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"alice","content":"pong, your turn"}`)}}
		}
	}
}

// Two teammates bouncing messages: the lead is told, and the run ends at
// its budget of model calls with its own exit code, having made no more.
func TestAPingPongIsToldAndStopsAtTheBudget(t *testing.T) {
	srv := fakellm.New(pingPongScript(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", "off", "--max-model-calls", "60", "play")
	if r.code != exit.Budget {
		t.Fatalf("exit %d, want %d (budget)\nstderr:\n%s", r.code, exit.Budget, r.stderr)
	}
	if !strings.Contains(r.stderr, "reached its budget of 60 model calls (--max-model-calls)") {
		t.Errorf("stderr does not say the budget was reached:\n%s", r.stderr)
	}
	if n := len(srv.Calls()); n > 60 {
		t.Errorf("%d model calls were made, over the budget of 60", n)
	}
	lead, _, err := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox")).ReadAll(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	var told int
	for _, m := range lead {
		if strings.Contains(m.Content, "near-identical messages") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the lead was told of the loop %d times, want once", told)
	}
}

func TestBoundsFlagsRefuseWhatNoRunCanHave(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--demo", "--max-turns", "0", "hi"},
		{"run", "--demo", "--max-turns", "-1", "hi"},
		{"run", "--demo", "--max-model-calls", "-3", "hi"},
	} {
		r := runBin(t, t.TempDir(), nil, "", args...)
		if r.code != exit.Usage || !strings.Contains(r.stderr, "must") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// In chat the budget ends the team as in run, with the sentence; the
// input stays open, as a person's would.
func TestAChatStopsAtItsBudget(t *testing.T) {
	srv := fakellm.New(pingPongScript(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	lc := startLineChat(t, t.TempDir(), append(fakeEnv(srv), "TERM=dumb"),
		"chat", "--plain", "--sandbox", "off", "--permission-mode", "yolo", "--max-model-calls", "40")
	lc.send("play")
	lc.waitFor("reached its budget of 40 model calls", 1)
	lc.stdin.Close()
	lc.exit()
	if n := len(srv.Calls()); n > 40 {
		t.Errorf("%d model calls were made, over the budget of 40", n)
	}
}

// A teammate's reply longer than a message reaches the lead cut, with
// where the whole of it is; the teammate does not fail for it.
func TestATeammatesLongReplyReachesTheLeadCut(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write a lot"}`)}},
			{Content: "got it"},
		},
		"alice": {{Content: strings.Repeat("word ", 300<<10)}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} })
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", "off", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	lead, _, err := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox")).ReadAll(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range lead {
		if m.From == "alice" && m.Type == inbox.TypeResult {
			if !strings.Contains(m.Content, "the whole of it is the last reply in") {
				t.Errorf("alice's result does not say it was cut: ...%q", m.Content[max(0, len(m.Content)-200):])
			}
			return
		}
	}
	t.Fatalf("alice's result never reached the lead; stderr:\n%s", r.stderr)
}

// [team] max_model_calls in the user file bounds a run; a project file's
// larger one does not raise it.
func TestTheBudgetFromTheUserFileHoldsOverAProjectsLargerOne(t *testing.T) {
	srv := fakellm.New(pingPongScript(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[team]\nmax_model_calls = 1000\n")
	env := append(fakeEnv(srv), configHome(t, "[team]\nmax_model_calls = 30\n")...)
	r := runBin(t, ws, env, "", "run", "--sandbox", "off", "play")
	if r.code != exit.Budget || !strings.Contains(r.stderr, "budget of 30 model calls") {
		t.Fatalf("exit %d, want %d with the user file's budget of 30\nstderr:\n%s", r.code, exit.Budget, r.stderr)
	}
	if n := len(srv.Calls()); n > 30 {
		t.Errorf("%d model calls were made, over the budget of 30", n)
	}
}

// [team] max_tool_call_bytes in the user file lowers the bound on a call.
func TestTheToolCallBoundFromTheConfig(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"mid.txt","content":"`+strings.Repeat("y", 8<<10)+`"}`)}},
			{Content: "done"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := append(fakeEnv(srv), configHome(t, "[team]\nmax_tool_call_bytes = 4096\n")...)
	r := runBin(t, ws, env, "", "run", "--sandbox", "off", "write")
	if r.code != 0 || !strings.Contains(r.stderr, "bound of 4 KiB") {
		t.Fatalf("exit %d; stderr does not say the 4 KiB bound:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "mid.txt")); !os.IsNotExist(err) {
		t.Errorf("a call past the configured bound ran: %v", err)
	}
}

// A resumed conversation far larger than any window, with no window
// configured: the first request it sends is cut to about a million tokens
// (4 MiB) with the rest summarized, not sent whole (12.7 MB of a 300 MiB
// session before, which every server refuses).
func TestAResumedHugeSessionsFirstRequestIsBounded(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", "off", "start"), "the first run")
	f, err := os.OpenFile(filepath.Join(ws, ".agentteam", "sessions", "lead.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 64<<10)
	w := bufio.NewWriter(f)
	for i := range 480 { // 30 MiB of tool results
		fmt.Fprintf(w, `{"role":"assistant","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read_inbox","arguments":"{}"}}]}`+"\n", i)
		fmt.Fprintf(w, `{"role":"tool","content":"%d %s","tool_call_id":"call_%d"}`+"\n", i, pad, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", "off", "--resume", "go on"), "run --resume")
	reqs := srv.Requests("lead")
	if len(reqs) < 2 {
		t.Fatalf("%d requests of the lead", len(reqs))
	}
	body, err := json.Marshal(reqs[1].Messages)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > 5<<20 {
		t.Fatalf("the resumed conversation's first request holds %d bytes of messages, over 5 MiB", len(body))
	}
	if !strings.Contains(string(body), "479 xxx") || strings.Contains(string(body), `"0 xxx`) {
		t.Errorf("the first request lacks the newest tool result or still holds the oldest")
	}
}
