package cmd

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/tasks"
)

// tasksJSON runs `agentteam tasks --json` and decodes the board.
func tasksJSON(t *testing.T, ws string) board.File {
	t.Helper()
	r := runBin(t, ws, nil, "", "tasks", "--json")
	mustSucceed(t, r, "tasks --json")
	var b board.File
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, r.stdout)
	}
	return b
}

// wantAllCompleted checks the board holds exactly the ids given, each completed by its owner.
func wantAllCompleted(t *testing.T, b board.File, owners map[string]string) {
	t.Helper()
	if len(b.Tasks) != len(owners) {
		t.Fatalf("board has %d tasks, want %d: %+v", len(b.Tasks), len(owners), b.Tasks)
	}
	for _, task := range b.Tasks {
		if task.Status != board.TaskCompleted || task.Owner != owners[task.ID] {
			t.Errorf("%s: %s owned by %q, want completed by %s", task.ID, task.Status, task.Owner, owners[task.ID])
		}
	}
}

// TestTaskBoardThroughTheBinary: the lead creates two tasks, the second
// blocked by the first; a teammate is refused the blocked one, claims and
// completes the first, then claims and completes the second. `tasks`
// shows both completed by it.
func TestTaskBoardThroughTheBinary(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"write hello.txt","description":"one line: hello"}`),
				call("task_create", `{"subject":"check hello.txt","description":"read it back","blocked_by":["t1"]}`),
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"do the tasks on the board"}`),
			}},
			{Content: "alice is on it"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t2"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t1"}`)}},
			{ToolCalls: []fakellm.ToolCall{
				call("write_file", `{"path":"hello.txt","content":"hello\n"}`),
				call("task_update", `{"id":"t1","status":"completed","note":"wrote hello.txt"}`),
			}},
			{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t2"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("task_update", `{"id":"t2","status":"completed","note":"it says hello"}`)}},
			{Content: "both tasks done"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	run := runBin(t, ws, fakeEnv(srv), "", "run", "write and check hello.txt")
	mustSucceed(t, run, "run")
	noViolations(t, srv)
	if !strings.Contains(run.stderr, "alice completed t1: write hello.txt (unblocks t2)") {
		t.Errorf("run's progress lacks the completion:\n%s", run.stderr)
	}
	wantAllCompleted(t, tasksJSON(t, ws), map[string]string{"t1": "alice", "t2": "alice"})

	// What alice's tools answered, in order: refused (blocked), then granted.
	var results []string
	for _, m := range readSession(t, state(ws, "sessions", "alice.jsonl")) {
		if m.Role == openai.ChatMessageRoleTool {
			results = append(results, m.Content)
		}
	}
	want := []string{"error: could not claim t2: t2 waits for t1", "You own t1 now", "Wrote", "t1 is completed. It unblocks t2.", "You own t2 now", "t2 is completed."}
	if len(results) != len(want) {
		t.Fatalf("alice's tool results:\n%s", strings.Join(results, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(results[i], w) {
			t.Errorf("tool result %d = %q, want it to contain %q", i, results[i], w)
		}
	}

	r := runBin(t, ws, nil, "", "tasks")
	mustSucceed(t, r, "tasks")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "t2") || !strings.Contains(lines[2], "completed") ||
		!strings.Contains(lines[2], "alice") || !strings.Contains(lines[2], "t1") || !strings.Contains(r.stderr, "2 tasks, 2 completed") {
		t.Fatalf("tasks:\n%s\n%s", r.stdout, r.stderr)
	}
	events := readEvents(t, state(ws, "events.jsonl"))
	var taskEvents []string
	for _, e := range events {
		if e.Kind == event.EventTask {
			taskEvents = append(taskEvents, e.Detail)
		}
	}
	wantEvents := []string{"lead created t1: write hello.txt", "lead created t2: check hello.txt", "alice claimed t1: write hello.txt",
		"alice completed t1: write hello.txt (unblocks t2)", "alice claimed t2: check hello.txt", "alice completed t2: check hello.txt"}
	if strings.Join(taskEvents, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("task events:\n%s\nwant:\n%s", strings.Join(taskEvents, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// TestAutoClaimThroughTheBinary: with run --auto-claim the teammate only says
// "ready"; going idle it is given t1, then t2 once t1 is completed.
func TestAutoClaimThroughTheBinary(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"write hello.txt","description":""}`),
				call("task_create", `{"subject":"check hello.txt","description":"","blocked_by":["t1"]}`),
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"stand by for tasks"}`),
			}},
			{Content: "the board is set"},
		},
		"alice": {
			{Content: "ready"},
			{ToolCalls: []fakellm.ToolCall{call("task_update", `{"id":"t1","status":"completed","note":"done"}`)}},
			{Content: "t1 done"},
			{ToolCalls: []fakellm.ToolCall{call("task_update", `{"id":"t2","status":"completed","note":"done"}`)}},
			{Content: "t2 done"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "--auto-claim", "set up the board")
	mustSucceed(t, r, "run --auto-claim")
	noViolations(t, srv)
	wantAllCompleted(t, tasksJSON(t, ws), map[string]string{"t1": "alice", "t2": "alice"})
	for _, line := range []string{"alice auto-claimed t1", "alice auto-claimed t2"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}
	assigned := 0
	for _, m := range readInbox(t, ws, "alice") {
		if m.Type == tasks.TypeTaskAssigned {
			assigned++
		}
	}
	if assigned != 2 {
		t.Fatalf("alice got %d task_assigned messages, want 2", assigned)
	}
}

func TestTasksCommandOnAnEmptyWorkspace(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "tasks")
	mustSucceed(t, r, "tasks")
	if r.stdout != "" || !strings.Contains(r.stderr, "no tasks") {
		t.Fatalf("tasks on an empty workspace: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if b := tasksJSON(t, ws); len(b.Tasks) != 0 || b.Version != 0 {
		t.Fatalf("tasks --json on an empty workspace: %+v", b)
	}
	if _, err := os.Stat(state(ws)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("`tasks` created .agentteam (%v)", err)
	}
	r = runBin(t, ws, nil, "", "tasks", "extra")
	if r.code != 2 {
		t.Fatalf("tasks with an argument: exit %d, want 2", r.code)
	}
}
