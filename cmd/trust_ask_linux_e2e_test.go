//go:build linux

package cmd

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// startTerminalChat starts chat with a pseudo-terminal for its stdin,
// stdout and stderr, as a person's shell would.
func startTerminalChat(t *testing.T, ws string, env []string, args ...string) *lineChat {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	c := exec.CommandContext(ctx, binary(t), append([]string{"chat"}, args...)...)
	c.Dir = ws
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1", "TERM=xterm-256color", "COLORFGBG=15;0"), env...)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	lc := &lineChat{t: t, cmd: c, done: make(chan error, 1), stdin: master}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go func() { _, _ = io.Copy(lc, master) }() // ends when the chat closes the terminal
	go func() { lc.done <- c.Wait() }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-lc.done
	})
	return lc
}

// TestChatAsksOnceWhetherToTrustTheProject: at a terminal, chat shows what
// an untrusted project file says that waits for trust and asks; y applies
// it to this chat (the command runs without an ask) and records the trust,
// n leaves it ignored (the command asks).
func TestChatAsksOnceWhetherToTrustTheProject(t *testing.T) {
	for _, tc := range []struct {
		answer string
		trust  bool
	}{{"y", true}, {"n", false}} {
		t.Run(tc.answer, func(t *testing.T) {
			ws := t.TempDir()
			writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[permissions]\nallow = [\"bash(*)\"]\n")
			srv := fakellm.New(permLeadScript(
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo the-command-ran"}`)}},
				fakellm.Reply{Content: "the lead is done"},
			), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			env := configHome(t, "")
			lc := startTerminalChat(t, ws, append(fakeEnv(srv), env...), "--plain")

			lc.waitFor(`permissions.allow "bash(*)"`, 1)
			lc.waitFor("Trust it? [y/N]", 1)
			lc.send(tc.answer)
			lc.send("go")
			if tc.trust {
				lc.waitFor("trusted .agentteam/config.toml as it is now", 1)
			} else {
				lc.waitFor("not trusted (agentteam trust changes that)", 1)
				lc.waitFor(untrustedSays+`permissions.allow "bash(*)"`, 1)
				lc.waitFor("answer y (allow once)", 1)
				lc.send("n not now")
			}
			lc.waitFor("the lead is done", 1)
			res := toolResults(t, ws, "lead")
			if ran := len(res) == 1 && strings.HasSuffix(res[0], "the-command-ran\n"); ran != tc.trust {
				t.Errorf("answer %s: the command's result is %q", tc.answer, res)
			}
			if _, err := lc.stdin.Write([]byte{4}); err != nil { // ctrl+d: the end of input
				t.Fatal(err)
			}
			if code := lc.exit(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, lc.output())
			}
			data, _ := os.ReadFile(filepath.Join(strings.TrimPrefix(env[0], "HOME="), ".local", "state", "agentteam", "trusted.json"))
			real, _ := filepath.EvalSymlinks(ws)
			if recorded := strings.Contains(string(data), real); recorded != tc.trust {
				t.Errorf("answer %s: the trust is recorded: %v", tc.answer, recorded)
			}
		})
	}
}
