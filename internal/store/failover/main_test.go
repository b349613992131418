package failover

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// binPath is the agentteam binary built once for this package's test
// (with -race when the test runs with it); testHome the empty HOME it runs with.
var binPath, testHome string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentteam-failover-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "agentteam")
	testHome = filepath.Join(dir, "home")
	if err := os.Mkdir(testHome, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/agentteam/agentteam")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build agentteam:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one agentteam process of the test.
type proc struct {
	cmd  *exec.Cmd
	args []string
	out  bytes.Buffer
	mu   sync.Mutex // guards errb
	errb bytes.Buffer
	done chan struct{}
	err  error // Wait's, once done is closed
}

// lockedWriter is a writer the process's stderr copier and the test share.
type lockedWriter struct{ p *proc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.errb.Write(b)
}

// start starts the binary in dir with env, bounded by within; the
// process is killed at the test's end if still running.
func start(t *testing.T, within time.Duration, dir string, env []string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	p := &proc{args: args, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, binPath, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, lockedWriter{p}
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// stderr is what the process wrote to stderr so far.
func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process's end and fails the test on a non-zero
// exit, a panic or a data race.
func (p *proc) wait(t *testing.T) string {
	t.Helper()
	<-p.done
	if s := p.stderr(); strings.Contains(s, "panic:") || strings.Contains(s, "WARNING: DATA RACE") {
		t.Fatalf("agentteam %v panicked or raced:\n%s", p.args, s)
	}
	if p.err != nil {
		t.Fatalf("agentteam %v: %v\n%s", p.args, p.err, p.stderr())
	}
	return p.out.String()
}

// cleanEnv is the environment without anything that would reach a real
// model or the developer's own configuration.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTTEAM_MODEL", "AGENTTEAM_WORKSPACE", "AGENTTEAM_STORE", "HOME", "XDG_CONFIG_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+testHome)
}
