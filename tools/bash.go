package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentteam/agentteam/workspace"
)

// waitDelay bounds how long a finished command may keep its output pipe
// open through a background child before the call returns anyway.
const waitDelay = 2 * time.Second

// hiddenEnv is never passed to commands the model runs, so it cannot print
// the key into a conversation that is written to disk.
var hiddenEnv = []string{"OPENAI_API_KEY"}

type bashArgs struct {
	Command string `json:"command" description:"Shell command, run with bash -c in the workspace root."`
}

// newBash runs commands in ws for at most timeout, keeping outputCap bytes
// of their output; while gate is closed only read-only commands run.
func newBash(ws *workspace.Workspace, gate WriteGate, timeout time.Duration, outputCap int) Tool {
	return newTool(BashName,
		sprintf("Run a shell command with bash -c in the workspace root, with empty stdin and a %gs timeout. "+
			"Returns the exit code and combined stdout+stderr; long output is cut in the middle. "+
			"Start long-running servers in the background with output redirected to a file.", timeout.Seconds()),
		func(ctx context.Context, a bashArgs) (Result, error) {
			if err := nonEmpty("command", a.Command); err != nil {
				return Errorf("%v", err), nil
			}
			if ws == nil {
				return Result{}, errors.New("no workspace configured")
			}
			if why := writeRefusal(gate); why != "" && !ReadOnlyCommand(a.Command) {
				return Errorf("%s; until then bash runs only read-only commands (ls, cat, grep, find, git status/log/diff, …) without redirection", why), nil
			}
			return runCommand(ctx, ws.Root, a.Command, timeout, outputCap), nil
		})
}

// runCommand runs command with bash -c in dir, killing it (and its
// children) after timeout or when ctx ends.
func runCommand(ctx context.Context, dir, command string, timeout time.Duration, outputCap int) Result {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, shell(), "-c", command)
	cmd.Dir = dir
	cmd.Env = commandEnv(os.Environ())
	out := newCapWriter(outputCap)
	cmd.Stdout = out // the same writer for both keeps their order
	cmd.Stderr = out
	cmd.WaitDelay = waitDelay
	killGroupOnCancel(cmd)

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

// shell is bash, or sh where bash is not installed.
func shell() string {
	if _, err := exec.LookPath("bash"); err == nil {
		return "bash"
	}
	return "sh"
}

func commandEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		hidden := false
		for _, h := range hiddenEnv {
			hidden = hidden || name == h
		}
		if !hidden {
			out = append(out, kv)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(no output)"
	}
	return s
}
