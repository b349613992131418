package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/plug/hooks"
)

const userHooks = `
[[hooks.PreToolUse]]
matcher = "bash|write_file"
command = "~/bin/guard.sh"
timeout = "30s"

[[hooks.Stop]]
command = "make check"
`

const projectHooks = `
[[hooks.TaskCompleted]]
command = "./scripts/tests.sh"
`

// TestHooksAreReadAsWritten: both files' hooks, the user's first; the
// project's only once the project is trusted.
func TestHooksAreReadAsWritten(t *testing.T) {
	o := setup(t, userHooks, projectHooks, nil)
	c := load(t, o)
	want := []hooks.Hook{
		{Event: hooks.PreToolUse, Matcher: "bash|write_file", Command: "~/bin/guard.sh", Timeout: 30 * time.Second, From: string(userSrc)},
		{Event: hooks.Stop, Command: "make check", From: string(userSrc)},
	}
	if !equalHooks(c.Hooks, want) {
		t.Errorf("untrusted: hooks %+v\nwant %+v", c.Hooks, want)
	}
	if got := strings.Join(c.Held.Lines(true), "|"); got != `hooks.TaskCompleted "./scripts/tests.sh"` {
		t.Errorf("held %q, want the project's hook", got)
	}
	trust(t, o)
	c = load(t, o)
	want = append(want, hooks.Hook{Event: hooks.TaskCompleted, Command: "./scripts/tests.sh", From: string(projectSrc)})
	if !equalHooks(c.Hooks, want) || !c.Held.IsEmpty() {
		t.Errorf("trusted: hooks %+v, held %v\nwant %+v", c.Hooks, c.Held.Lines(true), want)
	}
}

func equalHooks(a, b []hooks.Hook) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBadHooksAreRefused(t *testing.T) {
	for _, c := range []struct {
		name, file, want string
	}{
		{"event miscased", "[[hooks.pretooluse]]\ncommand = \"x\"\n", "hooks.pretooluse is not a hook event agentteam knows: events are case-sensitive, and this one is written PreToolUse"},
		{"event unknown", "[[hooks.BeforeEverything]]\ncommand = \"x\"\n", "hooks.BeforeEverything is not a hook event agentteam knows (SessionStart, "},
		{"no command", "[[hooks.Stop]]\nmatcher = \"\"\n", "hooks.Stop has a hook without a command"},
		{"bad matcher", "[[hooks.PreToolUse]]\nmatcher = \"(bash\"\ncommand = \"x\"\n", "hooks.PreToolUse.matcher is not a regular expression: missing closing ): `(bash`"},
		{"bad timeout", "[[hooks.PreToolUse]]\ncommand = \"x\"\ntimeout = \"soon\"\n", "hooks.PreToolUse.timeout must be a positive duration"},
		{"key miscased", "[[hooks.PreToolUse]]\nCommand = \"x\"\n", "hooks.PreToolUse.Command is not a setting agentteam knows: keys are case-sensitive, and this one is written command"},
		{"unknown key", "[[hooks.PreToolUse]]\ncommand = \"x\"\ntype = \"command\"\n", "hooks.PreToolUse.type is not a setting agentteam knows (in [hooks.PreToolUse]: command, matcher, timeout)"},
		{"one bracket", "[hooks.PreToolUse]\ncommand = \"x\"\n", "hooks.PreToolUse must be a list of tables: write each hook as [[hooks.EVENT]]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(setup(t, c.file, "", nil))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v\nwant %q", err, c.want)
			}
		})
	}
}
