package cmd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// startUntil starts the binary and returns once every wanted progress line
// has appeared on its stderr (or fails the test after a deadline).
func startUntil(t *testing.T, dir string, env []string, want []string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(binary(t), args...)
	c.Dir = dir
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			seen <- sc.Text()
		}
		close(seen)
	}()
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	deadline := time.After(60 * time.Second)
	var lines []string
	for len(missing) > 0 {
		select {
		case line, ok := <-seen:
			if !ok {
				t.Fatalf("agentteam ended before showing %v:\n%s", missing, strings.Join(lines, "\n"))
			}
			lines = append(lines, line)
			for w := range missing {
				if strings.Contains(line, w) {
					delete(missing, w)
				}
			}
		case <-deadline:
			c.Process.Kill()
			t.Fatalf("never saw %v:\n%s", missing, strings.Join(lines, "\n"))
		}
	}
	go func() { // keep draining so the process never blocks on stderr
		for range seen {
		}
	}()
	return c
}

// assertEachMessageOnce checks that every message in an agent's inbox is in
// its conversation exactly once: nothing lost, nothing delivered twice.
func assertEachMessageOnce(t *testing.T, ws, name string) {
	t.Helper()
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	msgs, _, err := store.ReadAll(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "sessions", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		// Tags are JSON-escaped inside the session line.
		tag := `id=\"` + m.ID + `\"`
		if n := strings.Count(string(data), tag); n != 1 {
			t.Errorf("%s's message %s (%q from %s) is in its conversation %d times, want once", name, m.ID, event.FirstLine(m.Content, 40), m.From, n)
		}
	}
	if st, _ := store.Stats(t.Context(), name); st.Unread != 0 {
		t.Errorf("%s still has %d unread", name, st.Unread)
	}
}

func TestResumeAfterTheProcessIsStopped(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ws := t.TempDir()
			first := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
				"lead": {{ToolCalls: []fakellm.ToolCall{
					{Name: "spawn_teammate", Args: `{"name":"alice","role":"programmer","prompt":"write the parser"}`},
					{Name: "spawn_teammate", Args: `{"name":"bob","role":"tester","prompt":"wait for the parser"}`},
				}}},
			}, func(c fakellm.Call) fakellm.Reply {
				switch c.Agent {
				case "alice":
					return fakellm.Reply{Content: "never arrives", Delay: time.Minute}
				case "bob":
					return fakellm.Reply{Content: "bob: ready"}
				}
				return fakellm.Reply{Content: "lead: waiting for alice"}
			}))
			defer first.Close()
			c := startUntil(t, ws, fakeEnv(first), []string{"alice is working", "bob is idle"}, "run", "build a parser")
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait()
			if code := c.ProcessState.ExitCode(); sig == syscall.SIGINT && code != 1 {
				t.Fatalf("interrupted run exited %d, want 1", code)
			}
			// While nothing runs, the person adds work for alice.
			if r := runBin(t, ws, nil, "", "send", "--to", "alice", "also handle empty input"); r.code != 0 {
				t.Fatalf("send: %s", r.stderr)
			}

			second := fakellm.New(func(c fakellm.Call) fakellm.Reply {
				switch c.Agent {
				case "alice":
					return fakellm.Reply{Content: "alice: parser written, empty input handled"}
				case "bob":
					return fakellm.Reply{Content: "bob: tested"}
				}
				return fakellm.Reply{Content: "lead: the parser is done"}
			})
			defer second.Close()
			r := runBin(t, ws, fakeEnv(second), "", "run", "--resume", "finish the work")
			if r.code != 0 {
				t.Fatalf("resume exit %d\n%s", r.code, r.stderr)
			}
			if v := append(first.Violations(), second.Violations()...); len(v) > 0 {
				t.Fatal(v)
			}
			if !strings.Contains(r.stderr, "alice is idle: resumed") {
				t.Errorf("alice did not come back:\n%s", r.stderr)
			}
			// Alice's conversation goes on from where it stopped.
			reqs := second.Requests("alice")
			if len(reqs) == 0 {
				t.Fatal("alice made no call after resuming")
			}
			var sawPrompt, sawExtra int
			for _, m := range reqs[0].Messages {
				sawPrompt += strings.Count(m.Content, "write the parser")
				sawExtra += strings.Count(m.Content, "also handle empty input")
			}
			if sawPrompt != 1 || sawExtra != 1 {
				t.Fatalf("alice's resumed conversation has the prompt %d times and the new message %d times, want 1 and 1", sawPrompt, sawExtra)
			}
			leadReqs := second.Requests("lead")
			var sawFirstPrompt bool
			for _, m := range leadReqs[0].Messages {
				sawFirstPrompt = sawFirstPrompt || strings.Contains(m.Content, "build a parser")
			}
			if !sawFirstPrompt {
				t.Fatal("the lead's conversation was not restored")
			}
			for _, name := range []string{"lead", "alice", "bob"} {
				assertEachMessageOnce(t, ws, name)
			}
			reg := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "")
			cfg, _ := reg.Read(t.Context())
			for _, m := range cfg.Teammates {
				if m.Status != registry.StatusShutdown {
					t.Errorf("%s is %s after the resumed run settled", m.Name, m.Status)
				}
			}
		})
	}
}
