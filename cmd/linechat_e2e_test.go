package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/registry"
)

// A piped chat is a dialogue: each prompt is answered before the next line
// is taken, commands print their text, teammates' events are lines, the end
// of input closes the team and exits 0, and not one escape sequence is written.
func TestChatInLinesTwoPromptsACommandAndATeammate(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "spawn alice as programmer\n/team\nlist team\n", "chat", "--demo")
	mustSucceed(t, r, "chat in lines")
	out := r.stdout
	if strings.Contains(out+r.stderr, "\x1b") {
		t.Fatalf("the line chat wrote an escape sequence:\n%q", out)
	}
	for _, want := range []string{
		"agentteam chat in lines (standard input and output are not a terminal)",
		"lead> spawn alice as programmer\n",
		"spawn alice (programmer) on demo", // the spawned teammate's event, as run prints it
		"lead: spawn_teammate alice  ✓",    // the lead's tool call
		"- spawn alice as programmer: done",
		"lead> /team\n",
		"lead> list team\n",
		"- list the team:",
		"alice is shutdown: the person quit",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, out)
		}
	}
	// One line at a time: /team runs after the first answer, the second prompt after /team.
	first, teamAt, second := strings.Index(out, "- spawn alice as programmer: done"), strings.Index(out, "lead> /team"), strings.Index(out, "lead> list team")
	table := strings.Index(out, "alice  programmer  ") // idle or still working
	if !(first < teamAt && teamAt < table && table < second) {
		t.Fatalf("the lines were not taken in order (answer %d, /team %d, its table %d, second prompt %d):\n%s", first, teamAt, table, second, out)
	}
	if cfg := readRegistry(t, ws); len(cfg.Teammates) != 1 || cfg.Teammates[0].Status != registry.StatusShutdown {
		t.Fatalf("registry after the end of input: %+v", cfg.Teammates)
	}
}

func TestChatInLinesRefusesUnknownAndScreenCommands(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "/frobnicate\n/mouse on\n/merge\n/help\n/quit\nnever said\n", "chat", "--demo")
	mustSucceed(t, r, "chat in lines")
	for _, want := range []string{
		"unknown command /frobnicate: /help lists the commands",
		"/mouse is for the full-screen chat",
		"usage: /merge name", // the TUI's own check of the arguments
		"/send name text",    // /help lists the TUI's commands
		"n REASON",           // and how to answer an ask here
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "/copy") || strings.Contains(r.stdout, "never said") {
		t.Errorf("/help lists a screen command or a line after /quit was taken:\n%s", r.stdout)
	}
}

// lineChat is a chat run on pipes, written to as its output asks.
type lineChat struct {
	t     *testing.T
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
	cmd   *exec.Cmd
	done  chan error
}

func startLineChat(t *testing.T, ws string, env []string, args ...string) *lineChat {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	c := exec.CommandContext(ctx, binary(t), args...)
	c.Dir = ws
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	lc := &lineChat{t: t, cmd: c, done: make(chan error, 1)}
	c.Stdout, c.Stderr = lc, lc
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	lc.stdin = in
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { lc.done <- c.Wait() }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-lc.done
	})
	return lc
}

func (lc *lineChat) Write(p []byte) (int, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.out.Write(p)
}

func (lc *lineChat) output() string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.out.String()
}

// waitFor polls the output, bounded, until it holds want n times.
func (lc *lineChat) waitFor(want string, n int) {
	lc.t.Helper()
	testkit.EventuallyF(lc.t, time.Minute, fmt.Sprintf("the chat to print %q (%d times)", want, n), func() bool {
		return strings.Count(lc.output(), want) >= n
	}, func() string { return "it printed:\n" + lc.output() })
}

func (lc *lineChat) send(line string) {
	lc.t.Helper()
	if _, err := io.WriteString(lc.stdin, line+"\n"); err != nil {
		lc.t.Fatalf("write %q: %v", line, err)
	}
}

// exit waits for the chat to end and returns its exit code.
func (lc *lineChat) exit() int {
	lc.t.Helper()
	select {
	case err := <-lc.done:
		lc.done <- err // for the cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			lc.t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		_ = lc.cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(2 * time.Second)
		lc.t.Fatalf("the chat did not end; it printed:\n%s", lc.output())
	}
	return -1
}

// chat defaults to ask mode: an ask is answered by typing y (or n and why).
func TestChatInLinesAnswersAPermissionAskFromStdin(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{"lead": {
		{ToolCalls: []fakellm.ToolCall{{Name: "write_file", Args: `{"path":"notes.txt","content":"hello from the lead\n"}`}}},
		{Content: "wrote the notes"},
		{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"echo gone > gone.txt"}`}}},
		{Content: "was told no"},
	}}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	lc := startLineChat(t, ws, fakeEnv(srv), "chat")

	lc.send("write the notes")
	lc.waitFor("answer y (allow once), a (allow always) or n REASON (deny)", 1)
	out := lc.output()
	if !strings.Contains(out, "lead asks user for permission: write_file notes.txt") || !strings.Contains(out, "+hello from the lead") {
		t.Fatalf("the ask does not say what and show the diff:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write ran before the person answered: %v", err)
	}
	lc.send("y")
	lc.waitFor("wrote the notes", 1)
	if got, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(got) != "hello from the lead\n" {
		t.Fatalf("notes.txt = %q, %v after y", got, err)
	}
	// The tool result says the call was allowed: no message after it says so again.
	for _, m := range srv.Requests("lead")[1].Messages {
		if strings.Contains(m.Content, "allowed your tool call") {
			t.Fatalf("the lead was told again that its call was allowed: %q", m.Content)
		}
	}

	lc.send("now remove it")
	lc.waitFor("answer y (allow once)", 2)
	lc.send("n not in this repo")
	lc.waitFor("was told no", 1)
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied command ran: %v", err)
	}
	session, err := os.ReadFile(state(ws, "sessions", "lead.jsonl"))
	if err != nil || !strings.Contains(string(session), "permission denied by the person: not in this repo") {
		t.Errorf("the lead's conversation lacks the denial and its reason (%v)", err)
	}
	lc.stdin.Close()
	if code := lc.exit(); code != 0 {
		t.Fatalf("exit %d at the end of input:\n%s", code, lc.output())
	}
	if strings.Contains(lc.output(), "\x1b") {
		t.Fatalf("an escape sequence was written:\n%q", lc.output())
	}
}

// ctrl+c during a reply interrupts the lead's turn; the second leaves.
func TestChatInLinesCtrlCInterruptsThenLeaves(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{"lead": {
		{Content: "too late", Delay: time.Minute}, // ends early when the request is cancelled
	}}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	lc := startLineChat(t, ws, fakeEnv(srv), "chat")
	lc.send("take your time")
	testkit.EventuallyF(t, time.Minute, "the lead's model call", func() bool { return len(srv.Calls()) > 0 },
		func() string { return "output:\n" + lc.output() })
	if err := lc.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	lc.waitFor("(the lead's turn was interrupted)", 1)
	if err := lc.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := lc.exit(); code != 0 {
		t.Fatalf("exit %d after the second ctrl+c:\n%s", code, lc.output())
	}
	if out := lc.output(); !strings.Contains(out, "interrupting the lead's turn") || strings.Contains(out, "too late") {
		t.Fatalf("output:\n%s", out)
	}
}

// --plain, or [ui] plain = true in a config file, asks for the line chat.
func TestChatInLinesByFlagOrConfig(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "chat", "--demo", "--plain")
	mustSucceed(t, r, "chat --plain")
	if !strings.Contains(r.stdout, "agentteam chat in lines (plain output was asked for)") {
		t.Fatalf("--plain: stdout:\n%s", r.stdout)
	}
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[ui]\nplain = true\n")
	r = runBin(t, ws, nil, "", "chat", "--demo")
	mustSucceed(t, r, "chat with [ui] plain = true")
	if !strings.Contains(r.stdout, "agentteam chat in lines (plain output was asked for)") {
		t.Fatalf("[ui] plain = true: stdout:\n%s", r.stdout)
	}
}

// A /quit at the end of a piped script comes after the lines before it,
// although it is read while the lead still answers the first.
func TestChatInLinesQuitWaitsForTheLinesBeforeIt(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "spawn alice as programmer\nlist team\n/quit\n", "chat", "--demo")
	mustSucceed(t, r, "chat in lines")
	for _, want := range []string{"lead> list team\n", "- list the team:"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("stdout lacks %q: the line before /quit was dropped:\n%s", want, r.stdout)
		}
	}
	if strings.Index(r.stdout, "- list the team:") > strings.Index(r.stdout, "lead> /quit") {
		t.Fatalf("/quit came before the answer to the line above it:\n%s", r.stdout)
	}
}

// A script's slash commands see what the lines above them did: each line
// waits for the team to be still, so /approve finds the plan the teammate
// spawned above it submitted, and no command's text lands in a reply.
func TestChatInLinesAScriptsCommandsRunAfterTheLinesAbove(t *testing.T) {
	ws := t.TempDir()
	script := strings.Join([]string{
		"/auto off",
		"spawn alice as programmer",
		"spawn carol as reviewer with a plan to review parse.go",
		"/approve carol looks fine",
		"/send carol also check the tests",
		"tell alice to message carol: the parser is ready",
		"list team",
		"/team",
		"shutdown alice",
		"/inbox",
		"/quit",
	}, "\n") + "\n"
	r := runBin(t, ws, nil, script, "chat", "--demo")
	mustSucceed(t, r, "chat in lines")
	out := r.stdout
	approve := strings.Index(out, "lead> /approve carol looks fine\n")
	if approve < 0 || !strings.HasPrefix(out[approve:], "lead> /approve carol looks fine\n") {
		t.Fatalf("no /approve line:\n%s", out)
	}
	next := out[approve:]
	if end := strings.Index(next, "lead> /send"); end > 0 {
		next = next[:end]
	}
	if !strings.Contains(next, "Approved carol's plan") {
		t.Fatalf("/approve ran before carol's plan came (its answer: %q):\n%s", next, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Here is what") && l != "Here is what I did:" {
			t.Fatalf("a line cut the lead's reply (%q):\n%s", l, out)
		}
	}
	if strings.Index(out, "lead> /quit") < strings.Index(out, "alice is shutdown") {
		t.Fatalf("/quit came before the line above it was done:\n%s", out)
	}
}

// The same with a teammate slow to plan: /approve waits for its plan however
// long it takes (the delay only makes the line run early without the wait).
func TestChatInLinesApproveWaitsForASlowTeammatesPlan(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"carol","role":"reviewer","prompt":"review parse.go","plan_mode":true}`}}},
			{Content: "carol is planning"},
		},
		"carol": {
			{Delay: 500 * time.Millisecond, ToolCalls: []fakellm.ToolCall{{Name: "submit_plan", Args: `{"plan":"read parse.go"}`}}},
			{Content: "plan sent"},
		},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("test-key"))
	r := runBin(t, ws, fakeEnv(srv), "/auto off\nspawn carol to review parse.go with a plan\n/approve carol go ahead\n", "chat")
	mustSucceed(t, r, "chat in lines")
	at := strings.Index(r.stdout, "lead> /approve carol go ahead\n")
	if at < 0 || !strings.Contains(r.stdout[at:], "Approved carol's plan") {
		t.Fatalf("/approve did not find carol's plan:\n%s", r.stdout)
	}
}

// personApprovesAPlan runs a chat in which the person approves carol's plan
// before the lead has read its request, then speaks to the lead again.
func personApprovesAPlan(t *testing.T) *fakellm.Server {
	t.Helper()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"carol","role":"reviewer","prompt":"review parse.go","plan_mode":true}`}}},
			{Content: "carol is planning"},
			{Content: "noted"},
		},
		"carol": {
			{ToolCalls: []fakellm.ToolCall{{Name: "submit_plan", Args: `{"plan":"read parse.go"}`}}},
			{Content: "plan sent"},
			{Content: "reviewed"},
		},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("test-key"))
	t.Cleanup(srv.Close)
	r := runBin(t, t.TempDir(), fakeEnv(srv), "/auto off\nspawn carol with a plan\n/approve carol go ahead\nwhat now?\n", "chat")
	mustSucceed(t, r, "chat in lines")
	return srv
}

// A plan the person answered reaches the lead as done, not as a request
// it is asked to review (and would be refused for: none waits).
func TestALeadIsNotAskedToReviewAPlanThePersonAnswered(t *testing.T) {
	srv := personApprovesAPlan(t)
	reqs := srv.Requests("lead")
	last := reqs[len(reqs)-1]
	var told bool
	for _, m := range last.Messages {
		if strings.Contains(m.Content, `type="plan_approval_request"`) {
			t.Fatalf("the lead was given the answered plan to review:\n%s", m.Content)
		}
		told = told || strings.Contains(m.Content, "The person has already approved carol's plan")
	}
	if !told {
		t.Fatalf("the lead was not told the person approved carol's plan: %+v", last.Messages)
	}
}

// The teammate is told who approved its plan: the person, not the lead.
func TestATeammateIsToldThePersonApprovedItsPlan(t *testing.T) {
	srv := personApprovesAPlan(t)
	reqs := srv.Requests("carol")
	var got string
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.Contains(m.Content, `type="plan_approval_response"`) {
			got = m.Content
		}
	}
	if !strings.Contains(got, "The person approved your plan") || strings.Contains(got, "The lead approved") {
		t.Fatalf("carol's answer to her plan reads:\n%s", got)
	}
}

// An interrupted reply stays in the conversation as far as it streamed,
// marked so: the person's next message does not follow theirs.
func TestChatInLinesKeepsAnInterruptedReply(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{"lead": {
		{Content: "half a reply", NoDone: true},
		{Content: "the rest"},
	}}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	lc := startLineChat(t, ws, fakeEnv(srv), "chat")
	lc.send("take your time")
	lc.waitFor("half a reply", 1)
	if err := lc.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	lc.waitFor("(the lead's turn was interrupted)", 1)
	lc.send("go on")
	lc.waitFor("the rest", 1)
	lc.stdin.Close()
	lc.exit()
	var roles []string
	for _, m := range srv.Requests("lead")[1].Messages[1:] { // after the system prompt
		roles = append(roles, m.Role+": "+m.Content)
	}
	want := []string{"user: take your time", "assistant: half a reply\n\n(interrupted)", "user: go on"}
	if strings.Join(roles, "|") != strings.Join(want, "|") {
		t.Fatalf("the conversation after the interrupt is\n%q\nwant\n%q", roles, want)
	}
}
