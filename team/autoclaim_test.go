package team

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/tasks"
)

func openTaskTeam(t *testing.T, srv *fakellm.Server, autoClaim bool) *Team {
	return newTestTeam(t, srv, Options{MaxWorkers: 2, AutoClaim: autoClaim})
}

func taskCall(name, args string) fakellm.ToolCall { return fakellm.ToolCall{Name: name, Args: args} }

// TestAutoClaimGivesIdleTeammatesFittingTasks: the lead creates a programmer
// task and a tester task blocked by it, and spawns both teammates, who only
// say "ready". Going idle, alice is given t1; completing it unblocks t2,
// which goes to bob (its text names his role), never to alice.
func TestAutoClaimGivesIdleTeammatesFittingTasks(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				taskCall("task_create", `{"subject":"write the parser","description":"parse.go","role":"programmer"}`),
				taskCall("task_create", `{"subject":"test the parser","description":"a job for the tester","blocked_by":["t1"]}`),
				taskCall("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"stand by"}`),
				taskCall("spawn_teammate", `{"name":"bob","role":"tester","prompt":"stand by"}`),
			}},
			{Content: "the board is set"},
		},
		"alice": {
			{Content: "ready"},
			{ToolCalls: []fakellm.ToolCall{taskCall("task_update", `{"id":"t1","status":"completed","note":"parse.go written"}`)}},
			{Content: "t1 done"},
		},
		"bob": {
			{Content: "ready"},
			{ToolCalls: []fakellm.ToolCall{taskCall("task_update", `{"id":"t2","status":"completed","note":"tests pass"}`)}},
			{Content: "t2 done"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": nothing more"} })
	srv := fakellm.New(script)
	defer srv.Close()
	tm := openTaskTeam(t, srv, true)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "set up the board"); err != nil {
		t.Fatal(err)
	}
	f, err := tm.Board().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"t1": "alice", "t2": "bob"}
	for _, task := range f.Tasks {
		if task.Status != board.TaskCompleted || task.Owner != want[task.ID] {
			t.Errorf("%s: %s owned by %q, want completed by %s", task.ID, task.Status, task.Owner, want[task.ID])
		}
	}
	for name, id := range map[string]string{"alice": "t1", "bob": "t2"} {
		msgs, _, err := tm.Mailbox().ReadAll(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		assigned := 0
		for _, m := range msgs {
			if m.Type == tasks.TypeTaskAssigned {
				assigned++
				if m.TaskID != id || !strings.Contains(m.Content, "You have been assigned task "+id) {
					t.Errorf("%s was assigned %q: %q", name, m.TaskID, m.Content)
				}
			}
		}
		if assigned != 1 {
			t.Errorf("%s got %d assignments, want 1", name, assigned)
		}
		// The assignment woke it: its second model call carried the message.
		reqs := srv.Requests(name)
		if len(reqs) < 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "assigned task "+id) {
			t.Errorf("%s's second call did not carry its assignment", name)
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

// TestNoAutoClaimByDefault: without AutoClaim an idle teammate is given nothing.
func TestNoAutoClaimByDefault(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				taskCall("task_create", `{"subject":"write the parser","description":""}`),
				taskCall("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"stand by"}`),
			}},
			{Content: "set"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": ready"} })
	srv := fakellm.New(script)
	defer srv.Close()
	tm := openTaskTeam(t, srv, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "set up"); err != nil {
		t.Fatal(err)
	}
	f, _ := tm.Board().Read(t.Context())
	if len(f.Tasks) != 1 || f.Tasks[0].Status != board.TaskPending || f.Tasks[0].Owner != "" {
		t.Fatalf("board %+v: want t1 still pending, unowned", f.Tasks)
	}
	if n := srv.CallsFor("alice"); n != 1 {
		t.Fatalf("alice made %d model calls, want 1 (nothing woke her)", n)
	}
}
