package cmd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// llamaServer is llama.cpp's real llama-server with the toy model that
// ../shared/realserver/setup.sh builds (about 15 minutes, once a machine)
// into ~/.cache/agentteam-llama, or AGENTTEAM_LLAMA_DIR. Without it the
// tests here are skipped with a sentence; .ci/run runs them when it exists.
func llamaServer(t *testing.T) (bin, model string) {
	t.Helper()
	dir := os.Getenv("AGENTTEAM_LLAMA_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "agentteam-llama")
	}
	bin = filepath.Join(dir, "llama.cpp", "build", "bin", "llama-server")
	model = filepath.Join(dir, "toy-agent.gguf")
	for _, p := range []string{bin, model} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no real llama-server here (%s is missing): bash ../shared/realserver/setup.sh builds it", p)
		}
	}
	return bin, model
}

// startLlama starts llama-server on a free port with args and returns its
// base URL once it answers /health.
func startLlama(t *testing.T, args ...string) string {
	t.Helper()
	bin, model := llamaServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	all := append([]string{"-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--jinja", "-np", "1", "-t", "2", "--offline"}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, bin, all...)
	var logs strings.Builder
	c.Stdout, c.Stderr = &logs, &logs
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c.Wait()
		if t.Failed() {
			t.Logf("llama-server's log:\n%s", tail(logs.String(), 3000))
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	testkit.Eventually(t, 90*time.Second, "llama-server to become healthy", func() bool {
		r, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	return base + "/v1"
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// llamaEnv points the binary at the server. The toy model fills every
// string argument with "alice", a spawn's model among them at times: a
// model of that name is configured too, so the spawn does not fail for it.
func llamaEnv(t *testing.T, base, key string) []string {
	t.Helper()
	user := "[providers.llama]\nbase_url = \"" + base + "\"\napi_key_env = \"LLAMA_TEST_KEY\"\nmodel = \"toy\"\nmodels = [\"alice\"]\n"
	return append(configHome(t, user), "LLAMA_TEST_KEY="+key)
}

// spawns counts the lead's spawn_teammate calls in its session.
func spawns(t *testing.T, ws string) int {
	t.Helper()
	n := 0
	for _, m := range readSession(t, filepath.Join(ws, ".agentteam", "sessions", "lead.jsonl")) {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "spawn_teammate" {
				n++
			}
		}
	}
	return n
}

// The whole path over a real server: the lead's tool call (llama.cpp's
// grammar and parser), the spawn, the teammate's own call, its result, the
// team settling.
func TestARealLlamaServerRunsATeam(t *testing.T) {
	base := startLlama(t, "-c", "32768", "-n", "512")
	ws := t.TempDir()
	r := runBin(t, ws, llamaEnv(t, base, "any"), "", "run", "--sandbox", "off", "--timeout", "80s", "spawn alice")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	cfg := readRegistry(t, ws)
	if m := findMember(t, cfg, "alice"); m.Turns == 0 {
		t.Errorf("alice made no turn: %+v", m)
	}
	if n := spawns(t, ws); n != 1 {
		t.Errorf("the lead spawned %d times, want once", n)
	}
}

// A context the conversation outgrows (llama.cpp rounds -c up to 256s:
// 3,328 tokens, of which the system prompt and the tools take about
// 3,200; the task's padding makes the lead's third request, after alice's
// report, the first refused: retune it when the prompts grow): the
// refusal is compacted, the lead does not spawn alice twice, and the run
// ends with its answer or a sentence that names the context window,
// never one that blames max_output_tokens.
func TestARealServersContextOverflowIsCompacted(t *testing.T) {
	base := startLlama(t, "-c", "3328", "-n", "256")
	ws := t.TempDir()
	task := "spawn alice" + strings.Repeat(" now", 10)
	r := runBin(t, ws, llamaEnv(t, base, "any"), "", "run", "--sandbox", "off", "--timeout", "80s", task)
	if strings.Contains(r.stderr, "max_output_tokens") {
		t.Errorf("a full context was blamed on the output limit:\n%s", r.stderr)
	}
	if r.code != 0 && !strings.Contains(r.stderr, "context window") {
		t.Errorf("exit %d without a sentence about the context window:\n%s", r.code, r.stderr)
	}
	events, err := os.ReadFile(filepath.Join(ws, ".agentteam", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(events), `"kind":"compacted"`) {
		t.Errorf("the server never refused the conversation, so nothing was compacted: the test proves nothing\n%s", r.stderr)
	}
	if n := spawns(t, ws); n != 1 {
		t.Errorf("the lead spawned alice %d times", n)
	}
}

// A tool call cut by the server's own output bound (-n) runs nothing and
// says so.
func TestARealServersCutToolCallRunsNothing(t *testing.T) {
	base := startLlama(t, "-c", "32768", "-n", "6")
	ws := t.TempDir()
	r := runBin(t, ws, llamaEnv(t, base, "any"), "", "run", "--sandbox", "off", "--timeout", "60s", "spawn alice")
	if r.code == 0 {
		t.Fatalf("a run whose every tool call is cut ended well:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "output limit") {
		t.Errorf("stderr does not say the reply reached its output limit:\n%s", r.stderr)
	}
	if cfg := readRegistry(t, ws); len(cfg.Teammates) != 0 {
		t.Errorf("a cut spawn ran: %+v", cfg.Teammates)
	}
}

// A wrong key is one sentence naming the variable it came from.
func TestARealServerRefusesAWrongKey(t *testing.T) {
	base := startLlama(t, "-c", "4096", "-n", "64", "--api-key", "the-right-key")
	r := runBin(t, t.TempDir(), llamaEnv(t, base, "a-wrong-key"), "", "run", "--sandbox", "off", "--timeout", "30s", "spawn alice")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "LLAMA_TEST_KEY") {
		t.Errorf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "a-wrong-key") || strings.Contains(r.stderr, "the-right-key") {
		t.Errorf("a key reached stderr:\n%s", r.stderr)
	}
}
