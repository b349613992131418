package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/registry"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildOut  []byte
)

// agentteamBinary builds the real binary once per test run.
func agentteamBinary(t *testing.T) string {
	t.Helper()
	testkit.SkipShort(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentteam-tui-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "agentteam")
		args := []string{"build", "-o", binary}
		if raceEnabled {
			args = append(args, "-race") // the real program's goroutines get checked too
		}
		args = append(args, "github.com/agentteam/agentteam")
		buildOut, buildErr = exec.Command("go", args...).CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build agentteam: %v\n%s", buildErr, buildOut)
	}
	return binary
}

// tmuxSession is one detached tmux session on a private server.
type tmuxSession struct {
	t    *testing.T
	sock string
}

const prompt = "READY$"

func startTmux(t *testing.T, dir string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	sockDir, err := os.MkdirTemp("", "tmx")
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, sock: filepath.Join(sockDir, "s")}
	t.Cleanup(func() {
		// The programs in the pane still write into the test's directory as
		// they end, so the server's end waits for them before the directory
		// is removed.
		defer os.RemoveAll(sockDir)
		procs := s.paneProcesses()
		_ = exec.Command("tmux", "-S", s.sock, "kill-server").Run()
		waitGone(t, procs)
	})
	// -u CI: the program sees a terminal as a person's is (a set CI is taken
	// for one without colours, and CI runs these tests with CI=true).
	s.run("new-session", "-d", "-x", "120", "-y", "40", "-s", "e2e", "-c", dir,
		"env -u CI -u OPENAI_API_KEY -u OPENAI_BASE_URL -u AGENTTEAM_WORKSPACE GORACE='atexit_sleep_ms=0' PS1='"+prompt+" ' bash --norc --noprofile")
	s.waitFor("the shell prompt", func(screen string) bool { return strings.Contains(screen, prompt) })
	return s
}

// paneProcesses is the pane's shell and every process under it.
func (s *tmuxSession) paneProcesses() []int {
	out, err := exec.Command("tmux", "-S", s.sock, "display-message", "-p", "-t", "e2e", "#{pane_pid}").Output()
	if err != nil {
		return nil
	}
	root, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		pid, ppid, _, ok := procStat(f)
		if ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	procs := []int{root}
	for i := 0; i < len(procs); i++ {
		procs = append(procs, children[procs[i]]...)
	}
	return procs
}

// procStat reads a /proc/PID/stat file's pid, parent and state.
func procStat(file string) (pid, ppid int, state string, ok bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, "", false
	}
	line := string(b)
	end := strings.LastIndexByte(line, ')')
	open := strings.IndexByte(line, ' ')
	if end < 0 || open < 0 {
		return 0, 0, "", false
	}
	fields := strings.Fields(line[end+1:])
	if len(fields) < 2 {
		return 0, 0, "", false
	}
	pid, err1 := strconv.Atoi(line[:open])
	ppid, err2 := strconv.Atoi(fields[1])
	return pid, ppid, fields[0], err1 == nil && err2 == nil
}

// waitGone waits until each process has ended (a zombie has).
func waitGone(t *testing.T, procs []int) {
	t.Helper()
	var running []int
	testkit.EventuallyF(t, 15*time.Second, "the tmux pane's processes to end after the server was killed", func() bool {
		running = slices.DeleteFunc(slices.Clone(procs), func(pid int) bool {
			_, _, state, ok := procStat("/proc/" + strconv.Itoa(pid) + "/stat")
			return !ok || state == "Z"
		})
		return len(running) == 0
	}, func() string { return fmt.Sprintf("still running: %v", running) })
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "e2e") }

// typeLine types text literally and presses enter.
func (s *tmuxSession) typeLine(text string) {
	s.run("send-keys", "-t", "e2e", "-l", text)
	s.run("send-keys", "-t", "e2e", "Enter")
}

// waitFor polls the screen until ok says yes; the bound only catches a hang.
func (s *tmuxSession) waitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	var screen string
	testkit.EventuallyF(s.t, 30*time.Second, what, func() bool {
		screen = s.screen()
		if strings.Contains(screen, "panic:") || strings.Contains(screen, "goroutine ") || strings.Contains(screen, "DATA RACE") {
			s.t.Fatalf("a Go panic or race report on screen:\n%s", screen)
		}
		return ok(screen)
	}, func() string { return "the screen is:\n" + screen })
	return screen
}

func contains(parts ...string) func(string) bool {
	return func(screen string) bool {
		for _, p := range parts {
			if !strings.Contains(screen, p) {
				return false
			}
		}
		return true
	}
}

// lastLine is the screen's last non-empty line.
func lastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func TestChatEndToEndInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	s := startTmux(t, ws)
	s.typeLine(bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "working 0/5, queued 0", "Messages"))

	s.typeLine("spawn alice as programmer; spawn bob as tester")
	s.waitFor("alice and bob in the team panel", contains("alice programmer", "bob tester"))

	s.typeLine("/send bob hi from the test")
	s.waitFor("the message in the feed", contains("user → bob message: hi from"))

	s.run("send-keys", "-t", "e2e", "C-c")
	screen := s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	if strings.Contains(screen, "Messages") {
		t.Fatalf("the TUI is still on screen after ctrl+c:\n%s", screen)
	}
	s.typeLine("echo chat-exit=$?")
	s.waitFor("chat's exit code", contains("chat-exit=0"))

	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "team", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c registry.Config
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Teammates) != 2 {
		t.Fatalf("registry has %d teammates, want alice and bob:\n%s", len(c.Teammates), data)
	}
	for _, m := range c.Teammates {
		if m.Status != registry.StatusShutdown {
			t.Fatalf("%s is %s after quitting, want shutdown:\n%s", m.Name, m.Status, data)
		}
	}
}

func TestChatWithoutKeySaysHowToSetOne(t *testing.T) {
	bin := agentteamBinary(t)
	s := startTmux(t, t.TempDir())
	s.typeLine(bin + " chat")
	s.waitFor("the notice", contains("OPENAI_API_KEY", "--demo"))
	s.typeLine("/spawn carol tester check things")
	s.waitFor("carol in the team panel", contains("carol tester"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}

func TestChatPlanApprovalAndShutdownInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	s := startTmux(t, ws)
	// Without auto the lead does not wake for carol's plan, so it waits for
	// the person. The person spawns her: a lead that spawned her would still
	// be in its turn when her plan may arrive, and review it there.
	s.typeLine(bin + " chat --demo --no-auto")
	s.waitFor("the TUI", contains("Team", "initializing", "Messages"))

	s.typeLine("/spawn --plan carol writer draft the notes")
	s.waitFor("carol's plan in the conversation", contains("⏸ carol asks to approve a plan", "/approve carol [feedback]"))

	s.typeLine("/approve carol go ahead")
	s.waitFor("the approval", contains("✓ approved by you", "✓ plan approved"))

	s.typeLine("/shutdown carol")
	s.waitFor("carol shut down", contains("■ carol writer shutdown"))

	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "team", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c registry.Config
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Teammates) != 1 || c.Teammates[0].PlanState != registry.PlanApproved || c.Teammates[0].Status != registry.StatusShutdown {
		t.Fatalf("registry after the session:\n%s", data)
	}
}

// TestChatShowsAMessageSentFromAnotherTerminal: `agentteam send --to lead`
// from another process reaches the lead, which answers it; the lead's
// conversation shows the message above the answer.
func TestChatShowsAMessageSentFromAnotherTerminal(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	s := startTmux(t, ws)
	s.typeLine(bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "working 0/5, queued 0", "Messages"))

	out, err := exec.Command(bin, "send", "--workspace", ws, "--to", "lead", "list team").CombinedOutput()
	if err != nil {
		t.Fatalf("send from another terminal: %v\n%s", err, out)
	}
	screen := s.waitFor("the message and the lead's answer", contains("user → lead (message)", "list the team:"))
	if strings.Index(screen, "user → lead (message)") > strings.Index(screen, "list the team:") {
		t.Errorf("the lead's answer is above the message it answers:\n%s", screen)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
