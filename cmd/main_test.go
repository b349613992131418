package cmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/sys/sandbox"
)

// builtBinary is the agentteam binary built once for the end-to-end tests,
// "" under -short, which builds none: tests take it through binary(t),
// which skips them then. testHome is the empty HOME it runs with.
var builtBinary, testHome string

// binary is the agentteam binary for an end-to-end test; under -short,
// where none is built, the test is skipped.
func binary(t testing.TB) string {
	t.Helper()
	if builtBinary == "" {
		t.Skip("an end-to-end test of the binary: not run under -short")
	}
	return builtBinary
}

func TestMain(m *testing.M) {
	sandbox.Init() // sandbox.Check in a test re-executes the test binary as a sandbox's init
	dir, err := os.MkdirTemp("", "agentteam-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	flag.Parse()
	// The binary never sees the developer's own ~/.config/agentteam.
	testHome = filepath.Join(dir, "home")
	if err := os.Mkdir(testHome, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Whose workspaces are whose: in-process tests record them where the
	// binary does, under testHome, never in the developer's own.
	os.Setenv("XDG_STATE_HOME", filepath.Join(testHome, ".local", "state"))
	if !testing.Short() {
		builtBinary = filepath.Join(dir, "agentteam")
		args := []string{"build", "-o", builtBinary}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/agentteam/agentteam")
		build := exec.Command("go", args...)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build agentteam:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the binary in dir with extra environment, bounded by a deadline.
func runBin(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	return runCommand(t, binary(t), dir, env, stdin, nil, args...)
}

// runCommand runs bin (an agentteam binary) in dir with the clean
// environment and extra env, as cred's user when it is not nil, bounded by
// a deadline; a panic, a trace or a data race fails the test.
func runCommand(t *testing.T, bin, dir string, env []string, stdin string, cred *syscall.Credential, args ...string) result {
	t.Helper()
	if bin == "" {
		binary(t) // skips under -short
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir = dir
	// The race runtime sleeps 1 s at exit by default; a thousand sends would crawl.
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	c.Stdin = strings.NewReader(stdin)
	if cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("agentteam %v did not finish in time; stderr:\n%s", args, errb.String())
	}
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic:") {
		t.Fatalf("agentteam %v printed a Go panic or trace:\n%s", args, errb.String())
	}
	if strings.Contains(errb.String(), "WARNING: DATA RACE") {
		t.Fatalf("agentteam %v has a data race:\n%s", args, errb.String())
	}
	return result{out.String(), errb.String(), code}
}

// cleanEnv is the environment without anything that would reach a real model.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTTEAM_MODEL", "AGENTTEAM_WORKSPACE", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+testHome)
}
