package gitwt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/agentteam/agentteam/internal/sys/sandbox"
)

// waitDelay bounds how long a git call waits, once git has exited or its
// context ended, for programs git started that still hold its output.
const waitDelay = time.Second

// gitVars are what git may have of the person's environment beyond the
// commands' allowlist: where the person's own config is, bounds on
// repository discovery, and who they are.
var gitVars = []string{
	"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
}

// netVars reach the person's remote on push and fetch only: their ssh
// agent (its socket signs, it never hands out a key), ssh and proxy
// choices and certificates.
var netVars = []string{
	"SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// gitEnv is git's environment: the commands' allowlist of the process's
// (never a variable that names a secret, nor one in hide), what git needs,
// and no prompt, pager or editor.
func gitEnv(net bool, hide []string) []string {
	extra := gitVars
	if net {
		extra = append(slices.Clone(gitVars), netVars...)
	}
	env := sandbox.Environ(os.Environ(), extra, hide)
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_PAGER=cat",
		"GIT_NO_LAZY_FETCH=1", "LC_ALL=C")
	if net && os.Getenv("GIT_PROXY_COMMAND") == "" {
		env = append(env, "GIT_PROXY_COMMAND=") // set, so no core.gitProxy is read
	}
	return env
}

// run runs git with args in dir, found from dir, and returns its stdout;
// a failure is an error holding git's own message.
func run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return runGit(ctx, dir, nil, env, false, nil, args)
}

// runGit runs git in dir on the repository where addresses (--git-dir
// and --work-tree, or nothing to find it from dir), with safety (and
// netSafety when net), the overrides that repository needs, and env.
func runGit(ctx context.Context, dir string, where, env []string, net bool, hide, args []string) (string, error) {
	base := gitEnv(net, hide)
	pre := append(slices.Clone(where), safety...)
	lines := 6
	if net {
		pre, lines = append(pre, netSafety...), 8
	}
	if !runsNoProgram(args) {
		ov, err := overrides(ctx, dir, base, pre)
		if err != nil {
			return "", err
		}
		for _, o := range ov {
			if strings.Contains(o.key, "=") {
				// git would read -c a.b=c.d=x as the key a.b
				return "", fmt.Errorf("the repository's git config sets %.100q, which agentteam cannot switch off: remove it", o.key)
			}
			pre = append(pre, "-c", o.key+"="+o.value)
		}
	}
	return execGit(ctx, dir, append(base, env...), append(pre, args...), lines)
}

// execGit runs git with exactly argv and env in a process group of its
// own, which is killed when ctx ends and once git has exited.
func execGit(ctx context.Context, dir string, env, argv []string, lines int) (string, error) {
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if cmd.Process != nil {
		_ = killGroup(cmd) // what git left behind
	}
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() && ctx.Err() == nil {
		err = nil // git itself finished; only a leftover held its output
	}
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", ErrNoGit
		}
		msg := strings.TrimSpace(errb.String())
		switch {
		case ctx.Err() != nil:
			msg = "stopped: " + ctx.Err().Error()
		case msg == "":
			msg = err.Error()
		}
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return out.String(), &gitError{sub: subcommand(argv), msg: firstLines(msg, lines), code: code}
	}
	return out.String(), nil
}

// gitError is a git command's failure in git's words, with its exit code.
type gitError struct {
	sub, msg string
	code     int
}

func (e *gitError) Error() string { return "git " + e.sub + ": " + e.msg }

// exitCode is the exit code of the git command err is the failure of (-1
// when it did not exit).
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// subcommand is the first argument of argv that is not a global option.
func subcommand(argv []string) string {
	for i := 0; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "git"
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "; ")
}
