package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/event"
)

// startBin starts the binary in dir; wait returns what it did, bounded.
func startBin(t *testing.T, dir string, env []string, args ...string) (wait func() result) {
	t.Helper()
	wait, _ = startBinWithin(t, 90*time.Second, dir, env, args...)
	return wait
}

// startBinWithin starts the binary in dir, killed after d; wait returns
// what it did, pid its process id.
func startBinWithin(t *testing.T, d time.Duration, dir string, env []string, args ...string) (wait func() result, pid func() int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	c := exec.CommandContext(ctx, binary(t), args...)
	c.Dir = dir
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cancel()
	})
	return func() result {
		t.Helper()
		err := c.Wait()
		done = true
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
		if s := errb.String(); strings.Contains(s, "panic:") || strings.Contains(s, "WARNING: DATA RACE") {
			t.Fatalf("agentteam %v panicked or raced:\n%s", args, s)
		}
		return result{out.String(), errb.String(), code}
	}, func() int { return c.Process.Pid }
}

// waitForAsk polls `agentteam requests --json` until an ask waits, and returns it.
func waitForAsk(t *testing.T, ws string, env []string) permask.Ask {
	t.Helper()
	var asks []permask.Ask
	testkit.Eventually(t, time.Minute, "a permission ask in agentteam requests", func() bool {
		asks = requestsJSON(t, ws, env)
		return len(asks) > 0
	})
	return asks[0]
}

// permissionEvents are the permission decisions in events.jsonl.
func permissionEvents(t *testing.T, ws string) []event.Permission {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, ".agentteam", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Permission
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		if p, ok := e.Payload.(event.Permission); ok {
			out = append(out, p)
		}
	}
	return out
}

func permLeadScript(replies ...fakellm.Reply) fakellm.Script {
	return fakellm.Queue(map[string][]fakellm.Reply{"lead": replies},
		func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
}

func TestPermissionAskApprovedFromAnotherTerminal(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"notes.txt","content":"hello\n"}`)}},
		fakellm.Reply{Content: "wrote the notes"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := fakeEnv(srv)

	wait := startBin(t, ws, env, "run", "--permission-mode", "ask", "--permission-delegate", "user", "write the notes")
	a := waitForAsk(t, ws, env)
	if a.Agent != "lead" || a.Tool != "write_file" || a.Path != "notes.txt" || a.To != "user" {
		t.Fatalf("the ask is %+v", a)
	}
	if !strings.Contains(a.Diff, "+hello") || !strings.Contains(a.Diff, "b/notes.txt") {
		t.Errorf("the ask does not show the diff of the write: %q", a.Diff)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was written before the ask was answered: %v", err)
	}
	human := runBin(t, ws, env, "", "requests")
	mustSucceed(t, human, "requests")
	if !strings.Contains(human.stdout, a.RequestID) || !strings.Contains(human.stdout, "+hello") {
		t.Errorf("requests does not show the ask and its diff:\n%s", human.stdout)
	}

	mustSucceed(t, runBin(t, ws, env, "", "approve", a.RequestID), "approve")
	r := wait()
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(got) != "hello\n" {
		t.Fatalf("notes.txt = %q, %v after the approval", got, err)
	}
	if !strings.Contains(r.stderr, "agentteam approve "+a.RequestID) {
		t.Errorf("run's progress does not say how to answer the ask:\n%s", r.stderr)
	}
	var allowed bool
	for _, p := range permissionEvents(t, ws) {
		allowed = allowed || (p.Tool == "write_file" && p.Decision == "allowed" && p.By == "user" && p.RequestID == a.RequestID)
	}
	if !allowed {
		t.Errorf("no event says the person allowed the write: %+v", permissionEvents(t, ws))
	}
	// Answered: nothing waits, and a second answer is refused.
	if again := runBin(t, ws, env, "", "deny", a.RequestID, "too late"); again.code == 0 {
		t.Errorf("a second answer to %s was accepted", a.RequestID)
	}
}

func TestPermissionAskDeniedFromAnotherTerminal(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		// The ESC sequences would erase the line on the person's screen and show only "ls".
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo made > made.txt # \u001b[2K\rls"}`)}},
		fakellm.Reply{Content: "could not"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := fakeEnv(srv)

	wait := startBin(t, ws, env, "run", "--permission-mode", "auto-edit", "--permission-delegate", "user", "make it")
	a := waitForAsk(t, ws, env)
	if a.Command != "echo made > made.txt # \x1b[2K\rls" {
		t.Fatalf("the ask does not carry the exact command: %+v", a)
	}
	human := runBin(t, ws, env, "", "requests")
	mustSucceed(t, human, "requests")
	if strings.ContainsAny(human.stdout, "\x1b\r") || !strings.Contains(human.stdout, "echo made > made.txt") {
		t.Errorf("requests shows the command's control characters raw:\n%q", human.stdout)
	}
	if r := runBin(t, ws, env, "", "deny", a.RequestID); r.code != 2 {
		t.Errorf("deny without a reason: exit %d, want 2", r.code)
	}
	mustSucceed(t, runBin(t, ws, env, "", "deny", a.RequestID, "not", "today"), "deny")
	mustSucceed(t, wait(), "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied command ran: %v", err)
	}
	res := toolResults(t, ws, "lead")
	if len(res) != 1 || !strings.Contains(res[0], "permission denied by the person: not today") {
		t.Fatalf("the tool result does not say it was denied and why: %q", res)
	}
}

var permissionIDRE = regexp.MustCompile(`review_permission\(request_id="(permission-[0-9a-f]+)"`)

func TestPermissionDelegatedLeadApprovesWithReviewPermission(t *testing.T) {
	var reviewed atomic.Bool
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead":  {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write the docs"}`)}}},
		"alice": {{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"docs/a.md","content":"# A\n"}`)}}, {Content: "alice: wrote docs/a.md"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" && !reviewed.Load() {
			for _, m := range c.Req.Messages {
				if id := permissionIDRE.FindStringSubmatch(m.Content); id != nil {
					reviewed.Store(true)
					return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("review_permission", fmt.Sprintf(`{"request_id":%q,"approve":true}`, id[1]))}}
				}
			}
		}
		return fakellm.Reply{Content: c.Agent + ": noted"}
	})
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "--permission-mode", "ask", "--permission-delegate", "lead", "--json", "write the docs")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got, err := os.ReadFile(filepath.Join(ws, "docs", "a.md")); err != nil || string(got) != "# A\n" {
		t.Fatalf("docs/a.md = %q, %v: the lead's approval did not let the write run", got, err)
	}
	var byLead bool
	for _, p := range permissionEvents(t, ws) {
		byLead = byLead || (p.Tool == "write_file" && p.Decision == "allowed" && p.By == "lead")
	}
	if !byLead {
		t.Errorf("no event says the lead allowed the write: %+v", permissionEvents(t, ws))
	}
	if !strings.Contains(r.stdout, `"kind":"permission"`) || !strings.Contains(r.stdout, `+# A`) {
		t.Errorf("--json does not carry the write's decision with its diff:\n%s", r.stdout)
	}
	if res := toolResults(t, ws, "lead"); !strings.Contains(strings.Join(res, "\n"), "Allowed alice's call") {
		t.Errorf("review_permission's result: %q", res)
	}
}

func TestPermissionHeadlessDenialAndDenyRuleBeatsYolo(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			call("bash", `{"command":"echo hi"}`),
			call("write_file", `{"path":"out.txt","content":"written\n"}`),
		}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"true && rm -f keep.txt"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := fakeEnv(srv)

	// auto-edit: the write runs, the command would ask, and nobody can answer.
	r := runBin(t, ws, env, "", "run", "--permission-mode", "auto-edit", "--deny", "bash(rm *)", "--json", "go")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	res := toolResults(t, ws, "lead")
	if len(res) != 3 {
		t.Fatalf("tool results %q", res)
	}
	if !strings.Contains(res[0], "permission denied") || !strings.Contains(res[0], "--allow 'bash(echo hi)'") {
		t.Errorf("the headless denial does not say which rule would allow it: %q", res[0])
	}
	if got, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(got) != "written\n" {
		t.Errorf("auto-edit did not let the write in the workspace run: %q, %v", got, err)
	}
	if !strings.Contains(res[2], "deny rule bash(rm *)") {
		t.Errorf("the denied command's result does not name the rule: %q", res[2])
	}
	if !strings.Contains(r.stdout, `+written`) {
		t.Errorf("--json does not carry the diff of the write:\n%s", r.stdout)
	}

	// yolo: the deny rule still wins.
	srv2 := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"rm -f keep.txt"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "--permission-mode", "yolo", "--deny", "bash(rm *)", "go"), "run yolo")
	if _, err := os.Stat(filepath.Join(ws, "keep.txt")); err != nil {
		t.Fatalf("a deny rule did not hold: keep.txt is gone (%v)", err)
	}
}

func TestPermissionApproveAlwaysWritesTheRuleAndTheNextCallDoesNotAsk(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo hi"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo hi"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := fakeEnv(srv)

	wait := startBin(t, ws, env, "run", "--permission-mode", "ask", "--permission-delegate", "user", "--permission-timeout", "60s", "go")
	a := waitForAsk(t, ws, env)
	mustSucceed(t, runBin(t, ws, env, "", "approve", "--always", a.RequestID), "approve --always")
	mustSucceed(t, wait(), "run")
	noViolations(t, srv)
	cfg, err := os.ReadFile(filepath.Join(ws, ".agentteam", "config.toml"))
	if err != nil || !strings.Contains(string(cfg), `allow = ["bash(echo hi)"]`) {
		t.Fatalf("the project file does not allow the command: %q, %v", cfg, err)
	}
	res := toolResults(t, ws, "lead")
	if len(res) != 2 || !strings.HasSuffix(res[0], "\nhi\n") || !strings.HasSuffix(res[1], "\nhi\n") {
		t.Fatalf("tool results %q", res)
	}
	asks := 0
	for _, p := range permissionEvents(t, ws) {
		if p.Decision == "asked" {
			asks++
		}
	}
	if asks != 1 {
		t.Errorf("%d asks, want 1 (the second call must not ask): %+v", asks, permissionEvents(t, ws))
	}
	// The next run reads the rule from the file: no flag, no ask.
	srv2 := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo hi"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "--permission-mode", "ask", "go"), "second run")
	if res := toolResults(t, ws, "lead"); len(res) != 1 || !strings.HasSuffix(res[0], "\nhi\n") {
		t.Fatalf("the rule in the project file did not allow the command: %q", res)
	}
}

func TestPermissionUnansweredAskTimesOutDenied(t *testing.T) {
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"late.txt","content":"x"}`)}},
		fakellm.Reply{Content: "gave up"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	env := fakeEnv(srv)

	r := runBin(t, ws, env, "", "run", "--permission-mode", "ask", "--permission-delegate", "user", "--permission-timeout", "300ms", "go")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "late.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unanswered write ran: %v", err)
	}
	res := toolResults(t, ws, "lead")
	if len(res) != 1 || !strings.Contains(res[0], "did not answer within 300ms") {
		t.Fatalf("the tool result does not say the ask timed out: %q", res)
	}
	list := runBin(t, ws, env, "", "requests", "--json")
	mustSucceed(t, list, "requests")
	if strings.TrimSpace(list.stdout) != "[]" {
		t.Errorf("a timed-out ask is still listed: %s", list.stdout)
	}
}
