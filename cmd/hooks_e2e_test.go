package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
)

// hookScript writes an executable shell script and returns its path.
func hookScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runHooked runs the lead's replies headless, every call allowed and
// unconfined (what is tested is the hooks), with env's config.
func runHooked(t *testing.T, ws string, env []string, replies ...fakellm.Reply) (result, *fakellm.Server) {
	t.Helper()
	srv := fakellm.New(permLeadScript(replies...), fakellm.WithAPIKey("test-key"))
	t.Cleanup(srv.Close)
	r := runBin(t, ws, append(fakeEnv(srv), env...), "", "run", "--permission-mode", "yolo", "--sandbox", "off", "go")
	return r, srv
}

// hookEvents are events.jsonl's hook lines.
func hookEvents(t *testing.T, ws string) []event.HookRun {
	t.Helper()
	data, err := os.ReadFile(state(ws, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []event.HookRun
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		if h, ok := e.Payload.(event.HookRun); ok {
			out = append(out, h)
		}
	}
	return out
}

// TestAPreToolUseHookBlocksACommand: a PreToolUse hook on bash exits 2;
// the command never runs, the hook's stderr is the tool result in the
// lead's next request, and the run shows the block in one line. A
// PostToolUse hook on write_file gets the call and its result on stdin.
// Neither sees the model's key.
func TestAPreToolUseHookBlocksACommand(t *testing.T) {
	ws, hooksDir := t.TempDir(), t.TempDir()
	pre := hookScript(t, hooksDir, "guard.sh", `cat > "`+hooksDir+`/pre.json"; env > "`+hooksDir+`/pre.env"
echo "no rm here: use git clean -n first" >&2
exit 2`)
	post := hookScript(t, hooksDir, "after.sh", `cat > "`+hooksDir+`/post.json"`)
	env := configHome(t, `
[[hooks.PreToolUse]]
matcher = "bash"
command = "`+pre+`"

[[hooks.PostToolUse]]
matcher = "write_file|edit_file"
command = "`+post+`"
`)
	r, srv := runHooked(t, ws, env,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"rm -rf build; echo ran > ran.txt"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"notes.txt","content":"hello\n"}`)}},
		fakellm.Reply{Content: "done"},
	)
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Error("the command a PreToolUse hook blocked ran")
	}
	reqs := srv.Requests("lead")
	if len(reqs) < 2 {
		t.Fatalf("the lead made %d requests", len(reqs))
	}
	var blocked string
	for _, m := range reqs[1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			blocked = m.Content
		}
	}
	if !strings.Contains(blocked, "a PreToolUse hook blocked this call: no rm here: use git clean -n first") {
		t.Errorf("the lead's next request has the tool result %q, want the hook's stderr", blocked)
	}
	if !strings.Contains(r.stderr, "lead: PreToolUse hook "+pre+" blocked bash: no rm here") {
		t.Errorf("run's progress does not show the block:\n%s", r.stderr)
	}

	var in map[string]any
	data, _ := os.ReadFile(filepath.Join(hooksDir, "pre.json"))
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("the PreToolUse hook's stdin %q: %v", data, err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	for k, v := range map[string]any{"hook_event_name": "PreToolUse", "tool_name": "bash", "agent": "lead", "role": "lead", "cwd": real, "workspace": real} {
		if in[k] != v {
			t.Errorf("PreToolUse stdin %s = %v, want %v", k, in[k], v)
		}
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "rm -rf build; echo ran > ran.txt" {
		t.Errorf("PreToolUse stdin tool_input = %v", in["tool_input"])
	}
	if id, _ := in["tool_use_id"].(string); id == "" {
		t.Errorf("PreToolUse stdin has no tool_use_id: %v", in)
	}
	hookEnv, _ := os.ReadFile(filepath.Join(hooksDir, "pre.env"))
	if strings.Contains(string(hookEnv), "OPENAI_API_KEY") || strings.Contains(string(hookEnv), "test-key") ||
		!strings.Contains(string(hookEnv), "AGENTTEAM_PROJECT_DIR="+real) {
		t.Errorf("the hook's environment has the model's key, or not the project's directory:\n%s", hookEnv)
	}

	var out struct {
		Event        string          `json:"hook_event_name"`
		Tool         string          `json:"tool_name"`
		Input        json.RawMessage `json:"tool_input"`
		ToolResponse struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		} `json:"tool_response"`
	}
	data, _ = os.ReadFile(filepath.Join(hooksDir, "post.json"))
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("the PostToolUse hook's stdin %q: %v", data, err)
	}
	if out.Event != "PostToolUse" || out.Tool != "write_file" || !strings.Contains(string(out.Input), `"notes.txt"`) ||
		!strings.Contains(out.ToolResponse.Content, "notes.txt") || out.ToolResponse.IsError {
		t.Errorf("the PostToolUse hook got %s", data)
	}
	var decisions []string
	for _, h := range hookEvents(t, ws) {
		decisions = append(decisions, h.Event+" "+h.Tool+" "+h.Decision)
	}
	if strings.Join(decisions, ", ") != "PreToolUse bash blocked, PostToolUse write_file ok" {
		t.Errorf("the hook events: %q", decisions)
	}
}

// TestATaskCompletedHookKeepsTheTaskOpen: the hook refuses while the
// tests fail; the task stays in progress and the lead reads why; once
// they pass, it completes. A TaskCreated hook keeps a task off the board.
func TestATaskCompletedHookKeepsTheTaskOpen(t *testing.T) {
	ws, hooksDir := t.TempDir(), t.TempDir()
	check := hookScript(t, hooksDir, "tests.sh", `cat > "`+hooksDir+`/task.json"
[ -f "$AGENTTEAM_PROJECT_DIR/tests-pass" ] && exit 0
echo "3 tests fail: fix them before completing" >&2
exit 2`)
	created := hookScript(t, hooksDir, "created.sh", `grep -q '"task_subject":"deploy' || exit 0
echo "deploys are not tasks for agents" >&2
exit 2`)
	env := configHome(t, "[[hooks.TaskCompleted]]\ncommand = \""+check+"\"\n[[hooks.TaskCreated]]\ncommand = \""+created+"\"\n")
	r, srv := runHooked(t, ws, env,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_create", `{"subject":"deploy to production","description":"now"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_create", `{"subject":"fix the parser","description":"it drops commas"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t1"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_update", `{"id":"t1","status":"completed","note":"fixed"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"touch tests-pass"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_update", `{"id":"t1","status":"completed","note":"fixed, tests pass"}`)}},
		fakellm.Reply{Content: "done"},
	)
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	res := toolResults(t, ws, "lead")
	wantResults(t, "lead", res, "the task was not created: a TaskCreated hook says: deploys are not tasks for agents", "t1", "You own t1 now", "t1 stays open: a TaskCompleted hook says: 3 tests fail: fix them before completing", "", "t1 is completed.")
	var task map[string]any
	data, _ := os.ReadFile(filepath.Join(hooksDir, "task.json"))
	if err := json.Unmarshal(data, &task); err != nil {
		t.Fatalf("the hook's stdin %q: %v", data, err)
	}
	if task["hook_event_name"] != "TaskCompleted" || task["task_id"] != "t1" || task["task_subject"] != "fix the parser" || task["task_description"] != "it drops commas" {
		t.Errorf("the TaskCompleted hook got %s", data)
	}
	tr := runBin(t, ws, env, "", "tasks", "--json")
	mustSucceed(t, tr, "tasks --json")
	var b board.File
	if err := json.Unmarshal([]byte(tr.stdout), &b); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, tr.stdout)
	}
	if len(b.Tasks) != 1 || b.Tasks[0].Status != board.TaskCompleted || b.Tasks[0].Note != "fixed, tests pass" {
		t.Errorf("the board: %+v", b.Tasks)
	}
}

// TestAHangingHookIsStoppedAtItsTimeout: a PreToolUse hook that never
// ends, with a child of its own, is killed at its timeout; the call goes
// on and the run says so in one line. A Stop hook that refuses once sends
// the lead back to work with its reason; a SessionStart hook's stdout is in
// the lead's instructions.
func TestAHangingHookIsStoppedAtItsTimeout(t *testing.T) {
	ws, hooksDir := t.TempDir(), t.TempDir()
	stop := hookScript(t, hooksDir, "stop.sh", `cat > "`+hooksDir+`/stop.json"
[ -f "`+hooksDir+`/stopped-once" ] && exit 0
touch "`+hooksDir+`/stopped-once"
echo "the changelog is not updated" >&2
exit 2`)
	env := configHome(t, `
[[hooks.PreToolUse]]
command = "sleep 600 & sleep 600"
timeout = "1s"

[[hooks.Stop]]
command = "`+stop+`"

[[hooks.SessionStart]]
matcher = "startup"
command = "echo the build on main is red"
`)
	r, srv := runHooked(t, ws, env,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo ran > ran.txt"}`)}},
		fakellm.Reply{Content: "done"},
		fakellm.Reply{Content: "changelog updated, done"},
	)
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err != nil {
		t.Errorf("the call a hanging hook held did not run: %v", err)
	}
	if !strings.Contains(r.stderr, "lead: PreToolUse hook sleep 600 & sleep 600 did not finish within 1s and was stopped; the step went on") {
		t.Errorf("run's progress does not say the hook was stopped:\n%s", r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "changelog updated, done" {
		t.Errorf("the run's answer is %q, want the one after the Stop hook's refusal", r.stdout)
	}
	reqs := srv.Requests("lead")
	if sys := reqs[0].Messages[0]; sys.Role != openai.ChatMessageRoleSystem || !strings.Contains(sys.Content, "the build on main is red") {
		t.Errorf("the lead's instructions lack what the SessionStart hook said:\n%s", sys.Content)
	}
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != openai.ChatMessageRoleUser || !strings.Contains(m.Content, "a Stop hook says: the changelog is not updated") {
		t.Errorf("the lead's last request ends with %+v, want the Stop hook's reason", m)
	}
	var in map[string]any
	data, _ := os.ReadFile(filepath.Join(hooksDir, "stop.json"))
	if err := json.Unmarshal(data, &in); err != nil || in["stop_hook_active"] != true || in["last_assistant_message"] != "changelog updated, done" {
		t.Errorf("the second Stop run got %s (%v)", data, err)
	}
}

// TestAProjectHookWaitsForTrust: a cloned repository's hook is a command
// that would run as the person: it runs only after agentteam trust.
func TestAProjectHookWaitsForTrust(t *testing.T) {
	ws := t.TempDir()
	hookScript(t, filepath.Join(ws, "scripts"), "mark.sh", `touch hook-ran`)
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[[hooks.PreToolUse]]\ncommand = \"./scripts/mark.sh\"\n")
	env := configHome(t, "")
	bash := fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"true"}`)}}

	r, _ := runHooked(t, ws, env, bash, fakellm.Reply{Content: "done"})
	mustSucceed(t, r, "run")
	if _, err := os.Stat(filepath.Join(ws, "hook-ran")); err == nil {
		t.Fatal("an untrusted project file's hook ran")
	}
	if !strings.Contains(r.stderr, untrustedSays+`hooks.PreToolUse "./scripts/mark.sh"`) {
		t.Errorf("run does not say the hook waits for trust:\n%s", r.stderr)
	}
	tr := runBin(t, ws, env, "", "trust")
	mustSucceed(t, tr, "trust")
	if !strings.Contains(tr.stdout, `hooks.PreToolUse "./scripts/mark.sh"`) {
		t.Errorf("trust does not show the hook it trusts:\n%s", tr.stdout)
	}
	r, _ = runHooked(t, ws, env, bash, fakellm.Reply{Content: "done"})
	mustSucceed(t, r, "run")
	if _, err := os.Stat(filepath.Join(ws, "hook-ran")); err != nil {
		t.Errorf("the trusted project's hook did not run: %v\n%s", err, r.stderr)
	}
}

// TestAUserPromptSubmitHookRefusesThePrompt: exit 2 drops the prompt
// before the model sees it, and the person reads why.
func TestAUserPromptSubmitHookRefusesThePrompt(t *testing.T) {
	ws, hooksDir := t.TempDir(), t.TempDir()
	gate := hookScript(t, hooksDir, "prompt.sh", `echo "prompts must name a ticket" >&2; exit 2`)
	env := configHome(t, "[[hooks.UserPromptSubmit]]\ncommand = \""+gate+"\"\n")
	r, srv := runHooked(t, ws, env, fakellm.Reply{Content: "done"})
	if r.code == 0 || !strings.Contains(r.stderr, "a UserPromptSubmit hook refused the prompt: prompts must name a ticket") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if n := srv.CallsFor("lead"); n != 0 {
		t.Errorf("the model was called %d times with a refused prompt", n)
	}
}

// TestATeammateIdleHookKeepsATeammateWorking: a teammate about to go idle
// is sent back to work once with the hook's reason; the lead's own turns
// do not run it.
func TestATeammateIdleHookKeepsATeammateWorking(t *testing.T) {
	ws, hooksDir := t.TempDir(), t.TempDir()
	idle := hookScript(t, hooksDir, "idle.sh", `cat >> "`+hooksDir+`/idle.json"
[ -f "`+hooksDir+`/once" ] && exit 0
touch "`+hooksDir+`/once"
echo "write the report before you stop" >&2
exit 2`)
	env := configHome(t, "[[hooks.TeammateIdle]]\ncommand = \""+idle+"\"\n")
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"check the docs"}`)}},
			{Content: "alice is on it"},
		},
		"alice": {{Content: "checked"}, {Content: "report written"}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, ws, append(fakeEnv(srv), env...), "", "run", "--permission-mode", "yolo", "--sandbox", "off", "go")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	reqs := srv.Requests("alice")
	if len(reqs) < 2 {
		t.Fatalf("alice made %d requests", len(reqs))
	}
	msgs := reqs[1].Messages
	if m := msgs[len(msgs)-1]; !strings.Contains(m.Content, "a TeammateIdle hook says: write the report before you stop") {
		t.Errorf("alice's second request ends with %q, want the hook's reason", m.Content)
	}
	data, _ := os.ReadFile(filepath.Join(hooksDir, "idle.json"))
	if n := strings.Count(string(data), `"hook_event_name":"TeammateIdle"`); n < 2 || !strings.Contains(string(data), `"teammate_name":"alice"`) ||
		!strings.Contains(string(data), `"role":"writer"`) || strings.Contains(string(data), `"agent":"lead"`) {
		t.Errorf("the TeammateIdle hook ran %d times, with:\n%s", n, data)
	}
}
