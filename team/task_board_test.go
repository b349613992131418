package team

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// TestTeamTasksTextAndEvents: the board as agents' tools see it answers in
// words and logs every change as a task event.
func TestTeamTasksTextAndEvents(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "unused"}))
	defer srv.Close()
	tm := openTaskTeam(t, srv, false)
	var tasks tools.TaskBoard = tm.tasks
	ctx := context.Background()

	if s, err := tasks.ListTasks(ctx); err != nil || s != "the task board is empty" {
		t.Fatalf("empty list: %q %v", s, err)
	}
	steps := []struct {
		do   func() (string, error)
		want string
	}{
		{func() (string, error) { return tasks.CreateTask(ctx, "lead", tools.TaskSpec{Subject: "build"}) }, "t1 (pending): build"},
		{func() (string, error) {
			return tasks.CreateTask(ctx, "lead", tools.TaskSpec{Subject: "test", BlockedBy: []string{"t1"}})
		}, "t2 (pending, blocked by t1): test"},
		{func() (string, error) { return tasks.ClaimTask(ctx, "alice", "t1") }, "You own t1 now (in_progress): build"},
		{func() (string, error) { return tasks.ClaimTask(ctx, "alice", "t1") }, "You already own t1"},
		{func() (string, error) {
			return tasks.UpdateTask(ctx, "alice", "t1", string(board.TaskCompleted), "ok", nil)
		}, "t1 is completed. It unblocks t2."},
		{func() (string, error) { return tasks.ClaimTask(ctx, "bob", "t2") }, "You own t2 now"},
		{func() (string, error) {
			return tasks.UpdateTask(ctx, "bob", "t2", string(board.TaskPending), "later", nil)
		}, "t2 is pending again with no owner."},
	}
	for i, s := range steps {
		got, err := s.do()
		if err != nil || !strings.Contains(got, s.want) {
			t.Fatalf("step %d: %q %v; want %q", i, got, err, s.want)
		}
	}
	if _, err := tasks.ClaimTask(ctx, "bob", "t1"); err == nil || !strings.Contains(err.Error(), "already completed (by alice)") {
		t.Fatalf("claiming a completed task: %v", err)
	}
	list, err := tasks.ListTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "completed") ||
		!strings.Contains(lines[1], "alice") || !strings.Contains(lines[2], "t1") || !strings.Contains(lines[2], "pending") {
		t.Fatalf("list:\n%s", list)
	}

	f, err := os.Open(tm.Workspace().EventsPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var details []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if p, ok := e.Payload.(event.TaskChanged); ok {
			details = append(details, p.Text(e.Agent)) // the flat event's detail
		}
	}
	want := []string{"lead created t1: build", "lead created t2: test", "alice claimed t1: build",
		"alice completed t1: build (unblocks t2)", "bob claimed t2: test", "bob released t2: test (was bob's)"}
	if strings.Join(details, "\n") != strings.Join(want, "\n") {
		t.Fatalf("task events:\n%s\nwant:\n%s", strings.Join(details, "\n"), strings.Join(want, "\n"))
	}
}
