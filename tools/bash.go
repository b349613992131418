package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/internal/sys/gitwt"
	"github.com/agentteam/agentteam/internal/sys/sandbox"
	"github.com/agentteam/agentteam/workspace"
)

// waitDelay bounds how long a finished command may keep its output pipe
// open through a background child before the call returns anyway.
const waitDelay = 2 * time.Second

// defaultKeyEnv is hidden from commands when the caller gives no
// environment of its own (Sandbox.Env nil).
const defaultKeyEnv = "OPENAI_API_KEY"

// Sandbox is how the bash tool confines the commands it runs. The zero
// value runs them plainly, with agentteam's environment filtered by the
// allowlist and, in plan mode, only read-only commands allowed.
type Sandbox struct {
	// On runs every command in the sandbox (internal/sys/sandbox): its own
	// processes only, writes only in the agent's root (but not the team's
	// .agentteam state) and temp dir, none at all in plan mode before
	// approval.
	On bool
	// Network lets sandboxed commands reach the network.
	Network bool
	// Reason says why On is false, when the sandbox was wanted.
	Reason string
	// Env is the commands' environment (TMPDIR is set per agent); nil is
	// agentteam's own through sandbox.Environ, the model key hidden.
	Env []string
	// Writable are more directories every agent's commands may write.
	Writable []string
	// Hidden are files and directories sandboxed commands cannot read
	// (credentials): each is masked by an empty one.
	Hidden []string
	// TempDir holds each agent's temp dir, made at its first command;
	// "" makes one under the system's temp dir (sandbox on only).
	TempDir string
}

// State is the sandbox in words, for the status line and `team`:
// "on", "on, network off", or "off (reason)".
func (s Sandbox) State() string {
	switch {
	case s.On && s.Network:
		return "on"
	case s.On:
		return "on, network off"
	case s.Reason != "":
		return "off (" + s.Reason + ")"
	}
	return "off"
}

type bashArgs struct {
	Command string `json:"command" description:"Shell command, run with bash -c in the workspace root."`
}

// bash runs the model's commands in root for one agent.
type bash struct {
	agent     string
	root      string
	protect   []string // the team's state, read-only to commands
	watchOnce sync.Once
	watchWS   *workspace.Workspace // the root, for the files the person's tools run (personrun.go)
	gate      WriteGate
	sandbox   Sandbox
	timeout   time.Duration
	outputCap int

	tmpOnce sync.Once
	tmp     string // the agent's temp dir, once made
	tmpErr  error
}

// newBash runs commands in root for at most timeout, keeping outputCap
// bytes of their output, confined as sb says (never writing in protect);
// while gate is closed they may change nothing.
func newBash(agent, root string, protect []string, gate WriteGate, sb Sandbox, timeout time.Duration, outputCap int) Tool {
	b := &bash{agent: agent, root: root, protect: protect, gate: gate, sandbox: sb, timeout: timeout, outputCap: outputCap}
	desc := sprintf("Run a shell command with bash -c in the workspace root, with empty stdin and a %gs timeout. "+
		"Returns the exit code and combined stdout+stderr; long output is cut in the middle. ", timeout.Seconds())
	if sb.On {
		desc += "The command is sandboxed: it may write only in the workspace (not .agentteam/ nor .git's config, hooks and info) and in $TMPDIR, " +
			"and every process it starts ends when it ends, so start a server and use it in the same command."
	} else {
		desc += "Start long-running servers in the background with output redirected to a file."
	}
	return newTool(BashName, desc, b.call)
}

func (b *bash) call(ctx context.Context, a bashArgs) (Result, error) {
	if err := nonEmpty("command", a.Command); err != nil {
		return Errorf("%v", err), nil
	}
	if b.root == "" {
		return Result{}, errors.New("no workspace configured")
	}
	why := writeRefusal(b.gate)
	if why != "" && !b.sandbox.On && !ReadOnlyCommand(a.Command) {
		// Without the sandbox, the allowlist is all that keeps plan mode read-only.
		return Errorf("%s; until then bash runs only read-only commands (ls, cat, grep, find, git status/log/diff, …) without redirection", why), nil
	}
	env, err := b.env()
	if err != nil {
		return Errorf("could not run command: %v", err), nil
	}
	if why != "" && !b.sandbox.On {
		// The git the allowlist lets run must not run the repository's
		// programs (filters, textconv, fsmonitor…) unconfined either.
		env = append(env, gitwt.CommandEnv(ctx, b.root)...)
	}
	start := func(ctx context.Context) *exec.Cmd {
		if !b.sandbox.On {
			cmd := exec.CommandContext(ctx, shell(), "-c", a.Command)
			cmd.Dir, cmd.Env = b.root, env
			killGroupOnCancel(cmd)
			return cmd
		}
		p := sandbox.Policy{Dir: b.root, Writable: append([]string{b.tmp}, b.sandbox.Writable...), Protect: b.protect,
			Hidden: b.sandbox.Hidden, ReadOnly: why != "", Network: b.sandbox.Network, Env: env}
		return sandbox.Command(ctx, p, shell(), "-c", a.Command)
	}
	b.watchOnce.Do(func() { b.watchWS, _ = workspace.Open(b.root) }) // nil, nothing watched, if it fails
	before := watch(b.watchWS)
	r := runCommand(ctx, start, b.timeout, b.outputCap)
	if names, diff := before.changed(b.watchWS); len(names) > 0 {
		r.Diff = diff
		r.Content += sprintf("\n(this command changed %s: files the person's own tools run later; the person is shown the change)", strings.Join(names, ", "))
	}
	if why != "" && b.sandbox.On && !isSuccess(r) {
		r.Content += fmt.Sprintf("\n(%s: until then commands cannot write anything)", why)
	}
	return r, nil
}

// isSuccess reports whether a command result says exit code 0.
func isSuccess(r Result) bool {
	return !r.IsError && strings.HasPrefix(r.Content, "exit code: 0\n")
}

// env is the command's environment: the sandbox's (or agentteam's
// filtered), with TMPDIR the agent's own temp dir when there is one.
func (b *bash) env() ([]string, error) {
	env := b.sandbox.Env
	if env == nil {
		env = sandbox.Environ(os.Environ(), nil, []string{defaultKeyEnv})
	}
	if b.sandbox.TempDir == "" && !b.sandbox.On {
		return env, nil
	}
	b.tmpOnce.Do(func() {
		if b.sandbox.TempDir == "" {
			b.tmp, b.tmpErr = os.MkdirTemp("", "agentteam-"+b.agent+"-")
			return
		}
		b.tmp = filepath.Join(b.sandbox.TempDir, b.agent)
		if err := os.Mkdir(b.tmp, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			b.tmpErr = fmt.Errorf("make the temp dir: %w", err)
		}
	})
	if b.tmpErr != nil {
		return nil, b.tmpErr
	}
	env = sandbox.SetEnv(env, "TMPDIR", b.tmp)
	if b.sandbox.On && !goCacheWritable(env, b.sandbox.Writable) {
		// Go writes its build cache under HOME, which the sandbox keeps
		// read-only: without this, every go build and go test fails. The
		// agent's own cache starts cold; listing the user's cache in
		// [sandbox] writable shares it instead.
		env = sandbox.SetEnv(env, "GOCACHE", filepath.Join(b.tmp, "go-build"))
	}
	return env, nil
}

// goCacheWritable reports whether the commands' environment names a Go
// build cache, or Go's default one (under XDG_CACHE_HOME or HOME) lies in
// a directory the sandbox lets them write.
func goCacheWritable(env, writable []string) bool {
	get := func(name string) string {
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				return v
			}
		}
		return ""
	}
	if get("GOCACHE") != "" {
		return true // the person chose it
	}
	base := get("XDG_CACHE_HOME")
	if base == "" && get("HOME") != "" {
		base = filepath.Join(get("HOME"), ".cache")
	}
	if base == "" {
		return false
	}
	cache := filepath.Join(base, "go-build")
	for _, dir := range writable {
		if rel, err := filepath.Rel(dir, cache); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// runCommand runs the command start makes, killing it (and its children)
// after timeout or when ctx ends.
func runCommand(ctx context.Context, start func(context.Context) *exec.Cmd, timeout time.Duration, outputCap int) Result {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := start(runCtx)
	out := newCapWriter(outputCap)
	cmd.Stdout = out // the same writer for both keeps their order
	cmd.Stderr = out
	cmd.WaitDelay = waitDelay

	err := cmd.Run()
	output := out.String()
	switch {
	case runCtx.Err() != nil && ctx.Err() == nil:
		return Errorf("command timed out after %gs and was killed; output so far:\n%s", timeout.Seconds(), orNone(output))
	case ctx.Err() != nil:
		return Errorf("command was canceled (%v); output so far:\n%s", ctx.Err(), orNone(output))
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return Errorf("could not run command: %v", err)
	}
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return Text(sprintf("exit code: %d\n%s", code, orNone(output)))
}

// shell is bash, or sh where bash is not installed, by its full path (the
// sandbox's init looks for nothing).
func shell() string {
	for _, name := range []string{"bash", "sh"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return "sh"
}

func orNone(s string) string {
	if s == "" {
		return "(no output)"
	}
	return s
}
