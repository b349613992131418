package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Runner runs the configured hooks. A nil *Runner has none.
type Runner struct {
	hooks []compiled
	env   []string
}

type compiled struct {
	Hook
	re *regexp.Regexp
}

// New checks hs and makes a Runner that starts them with env (nil: an empty
// environment); a bad matcher is an error naming it.
func New(hs []Hook, env []string) (*Runner, error) {
	r := &Runner{env: env}
	for _, h := range hs {
		if !Known(string(h.Event)) {
			return nil, fmt.Errorf("%q is not a hook event (%s)", h.Event, eventList())
		}
		if strings.TrimSpace(h.Command) == "" {
			return nil, fmt.Errorf("a %s hook has no command", h.Event)
		}
		re, err := CompileMatcher(h.Matcher)
		if err != nil {
			return nil, fmt.Errorf("a %s hook's %w", h.Event, err)
		}
		r.hooks = append(r.hooks, compiled{Hook: h, re: re})
	}
	return r, nil
}

func eventList() string {
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// Has reports whether any hook is given for ev.
func (r *Runner) Has(ev Event) bool {
	if r == nil {
		return false
	}
	for _, h := range r.hooks {
		if h.Event == ev {
			return true
		}
	}
	return false
}

// matching are the hooks of in's event whose matcher takes in.
func (r *Runner) matching(in Input) []compiled {
	if r == nil {
		return nil
	}
	subject := in.ToolName
	if in.HookEventName == SessionStart {
		subject = in.Source
	}
	var out []compiled
	for _, h := range r.hooks {
		if h.Event != in.HookEventName {
			continue
		}
		if h.re != nil && in.HookEventName.Matched() && !h.re.MatchString(subject) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// Run runs, one after the other in the order configured, the hooks of in's
// event that match it, and tells report of each run. The first that
// blocks ends the step: later ones do not run for a step that will not
// happen. Whatever a hook does, Run returns once its timeout has passed.
func (r *Runner) Run(ctx context.Context, in Input, report func(Report)) Outcome {
	hs := r.matching(in)
	if len(hs) == 0 {
		return Outcome{}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return Outcome{} // only raw tool input could fail, and the loop checks it is JSON
	}
	var out Outcome
	var contexts []string
	for _, h := range hs {
		a, rep := r.runOne(ctx, h, in, stdin)
		if report != nil {
			report(rep)
		}
		if a.context != "" {
			contexts = append(contexts, a.context)
		}
		if a.block {
			out.Blocked, out.Reason = true, a.reason
			break
		}
	}
	out.Context = clipText(strings.Join(contexts, "\n"), maxReason)
	return out
}

// runOne runs one hook to its end, its timeout or ctx's end.
func (r *Runner) runOne(ctx context.Context, h compiled, in Input, stdin []byte) (answer, Report) {
	rep := Report{Event: h.Event, Command: h.Command, Tool: in.ToolName, ExitCode: -1}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, "/bin/sh", "-c", h.Command)
	cmd.Dir = in.Cwd
	cmd.Env = r.env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killGroup(cmd) }
	// A child that keeps the pipes open after the group is killed (it left
	// the group) does not hold the team: the pipes are closed after this.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	rep.Duration = time.Since(start)
	failed := func(text string) (answer, Report) {
		rep.Decision, rep.Text = "failed", text
		return answer{problem: text}, rep
	}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return failed(fmt.Sprintf("did not finish within %s and was stopped; the step went on", timeout))
	case ctx.Err() != nil:
		return failed("was stopped: the team is stopping")
	case err != nil && !errors.As(err, &exitErr):
		return failed(fmt.Sprintf("could not be started: %v; the step went on", err))
	}
	if ws, ok := cmd.ProcessState.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return failed(fmt.Sprintf("was ended by %s%s; the step went on", ws.Signal(), stderrTail(stderr.String())))
	}
	code := cmd.ProcessState.ExitCode()
	rep.ExitCode = code
	switch code {
	case 126:
		return failed(fmt.Sprintf("cannot be run (exit 126: is %s executable?)%s; the step went on", firstWord(h.Command), stderrTail(stderr.String())))
	case 127:
		return failed(fmt.Sprintf("was not found (exit 127: %s)%s; the step went on", firstWord(h.Command), stderrTail(stderr.String())))
	}
	if stdout.cut && code == 0 {
		return failed(fmt.Sprintf("printed more than %d KiB on stdout, which was ignored; the step went on", MaxOutput>>10))
	}
	a := decide(h.Event, code, stdout.String(), stderr.String())
	switch {
	case a.problem != "":
		rep.Decision, rep.Text = "failed", a.problem
	case a.block:
		rep.Decision, rep.Text = "blocked", a.reason
	default:
		rep.Decision = "ok"
	}
	return a, rep
}

// firstWord is the program a command line starts with.
func firstWord(command string) string {
	if f := strings.Fields(command); len(f) > 0 {
		return f[0]
	}
	return command
}

// capped keeps the first MaxOutput bytes written to it and drops the rest,
// so a hook printing without end neither fills memory nor blocks on a pipe.
type capped struct {
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.cut = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
