package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		matcher, name string
		want          bool
	}{
		{"", "bash", true},
		{"*", "write_file", true},
		{"bash", "bash", true},
		{"bash", "mcp__x__bash_helper", false},
		{"bash|write_file", "write_file", true},
		{"bash|write_file", "edit_file", false},
		{"mcp__github__.*", "mcp__github__issues", true},
		{"mcp__github__.*", "mcp__gitlab__issues", false},
		{"Bash", "bash", false}, // tool names are as spelled
	} {
		r, err := New([]Hook{{Event: PreToolUse, Matcher: c.matcher, Command: "true"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := len(r.matching(Input{HookEventName: PreToolUse, ToolName: c.name})) == 1
		if got != c.want {
			t.Errorf("matcher %q on %q: %v, want %v", c.matcher, c.name, got, c.want)
		}
	}
}

func TestMatcherOnlyWhereItMeansSomething(t *testing.T) {
	r, err := New([]Hook{{Event: Stop, Matcher: "bash", Command: "true"}, {Event: SessionStart, Matcher: "resume", Command: "true"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.matching(Input{HookEventName: Stop})); n != 1 {
		t.Errorf("a Stop hook with a matcher: %d hooks run, want 1", n)
	}
	if n := len(r.matching(Input{HookEventName: SessionStart, Source: "startup"})); n != 0 {
		t.Errorf("a SessionStart hook for resume ran at startup")
	}
	if n := len(r.matching(Input{HookEventName: PostToolUse, ToolName: "bash"})); n != 0 {
		t.Errorf("a hook of another event ran")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		hook Hook
		want string
	}{
		{Hook{Event: "preToolUse", Command: "x"}, `"preToolUse" is not a hook event`},
		{Hook{Event: PreToolUse, Command: " "}, "has no command"},
		{Hook{Event: PreToolUse, Matcher: "(", Command: "x"}, `matcher "(" is not a regular expression`},
	} {
		_, err := New([]Hook{c.hook}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.hook, err, c.want)
		}
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name           string
		ev             Event
		code           int
		stdout, stderr string
		want           answer
	}{
		{"exit 0 nothing", PreToolUse, 0, "", "", answer{}},
		{"exit 2 stderr", PreToolUse, 2, "ignored", "no rm here\n", answer{block: true, reason: "no rm here"}},
		{"exit 2 silent", TaskCompleted, 2, "", "", answer{block: true, reason: "a TaskCompleted hook refused without saying why (exit 2, nothing on stderr)"}},
		{"exit 1", PreToolUse, 1, "", "boom\nlast words", answer{problem: "exited 1: last words; it blocks nothing, so the step went on"}},
		{"deny", PreToolUse, 0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}`, "", answer{block: true, reason: "not on main"}},
		{"allow is no widening", PreToolUse, 0, `{"hookSpecificOutput":{"permissionDecision":"allow"}}`, "", answer{}},
		{"deny only for PreToolUse", PostToolUse, 0, `{"hookSpecificOutput":{"permissionDecision":"deny"}}`, "", answer{}},
		{"decision block", Stop, 0, `{"decision":"block","reason":"tests fail"}`, "", answer{block: true, reason: "tests fail"}},
		{"continue false", PostToolUse, 0, `{"continue":false,"stopReason":"enough"}`, "", answer{block: true, reason: "enough"}},
		{"block without reason", Stop, 0, `{"decision":"block"}`, "", answer{block: true, reason: "a Stop hook refused without saying why"}},
		{"context", PostToolUse, 0, `{"hookSpecificOutput":{"additionalContext":"lint: 2 warnings"}}`, "", answer{context: "lint: 2 warnings"}},
		{"plain stdout is context at start", SessionStart, 0, "branch main, 3 open issues\n", "", answer{context: "branch main, 3 open issues"}},
		{"plain stdout elsewhere is not", PreToolUse, 0, "checking...\n", "", answer{}},
		{"bad JSON", PreToolUse, 0, `{"decision": `, "", answer{problem: "printed something on stdout that starts like JSON but is not: unexpected end of JSON input; it was ignored"}},
		{"wrong type", PreToolUse, 0, `{"continue": "no"}`, "", answer{problem: "printed something on stdout that starts like JSON but is not: cannot unmarshal string into Go struct field output.continue of type bool; it was ignored"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := decide(c.ev, c.code, c.stdout, c.stderr); got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func runHook(t *testing.T, h Hook, in Input) (Outcome, []Report) {
	t.Helper()
	r, err := New([]Hook{h}, []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"})
	if err != nil {
		t.Fatal(err)
	}
	var reps []Report
	out := r.Run(context.Background(), in, func(rep Report) { reps = append(reps, rep) })
	if len(reps) != 1 {
		t.Fatalf("%d reports, want 1", len(reps))
	}
	return out, reps
}

func TestRunGivesTheInputAndReadsTheAnswer(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "got.json")
	cmd := script(t, dir, "check.sh", `cat > "`+got+`"; pwd > "`+got+`.cwd"; env > "`+got+`.env"; echo "no writes to $(basename "$PWD")" >&2; exit 2`)
	in := Input{HookEventName: PreToolUse, Cwd: dir, ToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`), Agent: "alice", Role: "tester", Workspace: dir}
	out, reps := runHook(t, Hook{Event: PreToolUse, Matcher: "bash", Command: cmd}, in)
	if !out.Blocked || out.Reason != "no writes to "+filepath.Base(dir) {
		t.Errorf("outcome %+v, want blocked with the hook's stderr", out)
	}
	if reps[0].Decision != "blocked" || reps[0].ExitCode != 2 {
		t.Errorf("report %+v", reps[0])
	}
	var seen map[string]any
	data, _ := os.ReadFile(got)
	if err := json.Unmarshal(data, &seen); err != nil {
		t.Fatalf("the hook's stdin %q: %v", data, err)
	}
	for k, v := range map[string]any{"hook_event_name": "PreToolUse", "tool_name": "bash", "agent": "alice", "role": "tester", "cwd": dir} {
		if seen[k] != v {
			t.Errorf("stdin %s = %v, want %v", k, seen[k], v)
		}
	}
	if ti, _ := seen["tool_input"].(map[string]any); ti["command"] != "rm -rf /" {
		t.Errorf("stdin tool_input = %v", seen["tool_input"])
	}
	env, _ := os.ReadFile(got + ".env")
	if !strings.Contains(string(env), "ONLY=this") || strings.Contains(string(env), "HOME=") {
		t.Errorf("the hook's environment is not the one given:\n%s", env)
	}
}

func TestRunBadHooksAreOneSentenceEach(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, command string
		timeout       time.Duration
		want          string
	}{
		{"missing", filepath.Join(dir, "nope.sh"), 0, "was not found (exit 127: "},
		{"not executable", notExec, 0, "cannot be run (exit 126: is "},
		{"crashes", "kill -SEGV $$", 0, "was ended by segmentation fault; the step went on"},
		{"hangs", "sleep 600 & sleep 600", 300 * time.Millisecond, "did not finish within 300ms and was stopped; the step went on"},
		{"floods stdout", "head -c 100000000 /dev/zero", 0, "printed more than 64 KiB on stdout, which was ignored"},
		{"bad JSON", `echo '{"decision":'`, 0, "starts like JSON but is not"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, reps := runHook(t, Hook{Event: PreToolUse, Command: c.command, Timeout: c.timeout}, Input{HookEventName: PreToolUse, Cwd: dir, ToolName: "bash"})
			if out.Blocked {
				t.Errorf("a broken hook blocked the step: %+v", out)
			}
			if reps[0].Decision != "failed" || !strings.Contains(reps[0].Text, c.want) {
				t.Errorf("report %+v, want failed with %q", reps[0], c.want)
			}
			if strings.Contains(reps[0].Text, "\n") {
				t.Errorf("report text is more than one line: %q", reps[0].Text)
			}
		})
	}
}

func TestRunFirstBlockEndsTheStep(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "second-ran")
	r, err := New([]Hook{
		{Event: TaskCompleted, Command: `echo "tests fail" >&2; exit 2`},
		{Event: TaskCompleted, Command: "touch " + mark},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Run(context.Background(), Input{HookEventName: TaskCompleted, Cwd: dir}, nil)
	if !out.Blocked || out.Reason != "tests fail" {
		t.Errorf("outcome %+v", out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a hook after the one that blocked ran")
	}
}

func TestNilRunnerHasNone(t *testing.T) {
	var r *Runner
	if r.Has(PreToolUse) || r.Run(context.Background(), Input{HookEventName: PreToolUse}, nil) != (Outcome{}) {
		t.Error("a nil runner ran something")
	}
}

// TestATimeoutEndsWhatTheHookStarted: the hook's whole process group is
// killed, not only the shell.
func TestATimeoutEndsWhatTheHookStarted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	out, reps := runHook(t, Hook{Event: Stop, Command: `sleep 600 & echo $! > "` + pidFile + `"; wait`, Timeout: 300 * time.Millisecond},
		Input{HookEventName: Stop, Cwd: dir})
	if out.Blocked || reps[0].Decision != "failed" {
		t.Fatalf("outcome %+v, report %+v", out, reps[0])
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	stat := filepath.Join("/proc", strings.TrimSpace(string(data)), "stat")
	// Killed is gone, or a zombie until whoever inherited it reaps it.
	var b []byte
	testkit.EventuallyF(t, 10*time.Second, "the hook's child to end after its timeout", func() bool {
		if b, err = os.ReadFile(stat); err != nil {
			return true
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(f) > 0 && f[0] == "Z"
	}, func() string { return "it runs: " + string(b) })
}
