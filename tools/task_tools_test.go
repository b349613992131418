package tools

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type boardCall struct {
	op, agent, id, status, note string
	spec                        TaskSpec
	blockedBy                   []string
}

// fakeTasks records task board calls; err, if set, is every call's refusal.
type fakeTasks struct {
	calls []boardCall
	err   error
	list  string
}

func (f *fakeTasks) CreateTask(ctx context.Context, by string, spec TaskSpec) (string, error) {
	f.calls = append(f.calls, boardCall{op: "create", agent: by, spec: spec})
	return "t1 (pending): " + spec.Subject, f.err
}

func (f *fakeTasks) ListTasks(ctx context.Context) (string, error) {
	f.calls = append(f.calls, boardCall{op: "list"})
	return f.list, f.err
}

func (f *fakeTasks) ClaimTask(ctx context.Context, agent, id string) (string, error) {
	f.calls = append(f.calls, boardCall{op: "claim", agent: agent, id: id})
	return "You own " + id + " now", f.err
}

func (f *fakeTasks) UpdateTask(ctx context.Context, agent, id, status, note string, blockedBy []string) (string, error) {
	f.calls = append(f.calls, boardCall{op: "update", agent: agent, id: id, status: status, note: note, blockedBy: blockedBy})
	return id + " is " + status, f.err
}

func taskEnv(t *testing.T, agent string) (Env, *fakeTasks) {
	t.Helper()
	env, _, _, _ := testEnv(t)
	f := &fakeTasks{}
	env.Agent, env.Tasks = agent, f
	return env, f
}

func TestTaskToolsInBothSetsOnlyWithABoard(t *testing.T) {
	env, _ := taskEnv(t, "lead")
	names := []string{"task_create", "task_list", "task_claim", "task_update"}
	lead, mate := ForLead(env).Names(), ForTeammate(env).Names()
	for _, n := range names {
		if !slices.Contains(lead, n) || !slices.Contains(mate, n) {
			t.Errorf("%s missing: lead %v, teammate %v", n, lead, mate)
		}
	}
	env.Tasks = nil
	if s := ForTeammate(env); s.Has("task_claim") {
		t.Error("task tools present without a task board")
	}
	env.Tasks = &fakeTasks{}
	if s := ForLead(env); !s.Parallel("task_list") || s.Parallel("task_claim") || s.Parallel("task_create") {
		t.Error("task_list should run in parallel, task_claim not")
	}
}

func TestTaskCreate(t *testing.T) {
	env, f := taskEnv(t, "lead")
	s := ForLead(env)
	mustOK(t, s.Call(context.Background(), "task_create", `{"subject":"write the parser","description":"parse.go","blocked_by":["t0"],"role":"programmer"}`), "Created task t1 (pending): write the parser")
	if c := f.calls; len(c) != 1 || c[0].agent != "lead" || c[0].spec.Subject != "write the parser" || c[0].spec.Description != "parse.go" ||
		c[0].spec.Role != "programmer" || !slices.Equal(c[0].spec.BlockedBy, []string{"t0"}) {
		t.Fatalf("calls = %+v", f.calls)
	}
	refusals := []struct{ args, want string }{
		{`{"subject":" ","description":""}`, `"subject" must not be empty`},
		{`{"description":"x"}`, `missing required argument "subject"`},
		{`{"subject":"a","description":"b","blocked_by":"t1"}`, `"blocked_by" must be a JSON array`},
	}
	for _, r := range refusals {
		mustErr(t, s.Call(context.Background(), "task_create", r.args), r.want)
	}
	if len(f.calls) != 1 {
		t.Fatalf("the board was called for refused arguments: %+v", f.calls)
	}
	f.err = errors.New("blocked_by names t9, which is not on the board")
	mustErr(t, s.Call(context.Background(), "task_create", `{"subject":"a","description":"","blocked_by":["t9"]}`), "could not create the task: blocked_by names t9")
}

func TestTaskList(t *testing.T) {
	env, f := taskEnv(t, "alice")
	f.list = "ID  STATUS  OWNER\nt1  pending  -"
	mustOK(t, ForTeammate(env).Call(context.Background(), "task_list", ""), "t1  pending  -")
	f.err = errors.New("board unreadable")
	mustErr(t, ForTeammate(env).Call(context.Background(), "task_list", "{}"), "internal error: task_list: list tasks: board unreadable")
}

func TestTaskClaim(t *testing.T) {
	env, f := taskEnv(t, "alice")
	s := ForTeammate(env)
	mustOK(t, s.Call(context.Background(), "task_claim", `{"id":"t3"}`), "You own t3 now")
	if c := f.calls[0]; c.op != "claim" || c.agent != "alice" || c.id != "t3" {
		t.Fatalf("calls = %+v", f.calls)
	}
	mustErr(t, s.Call(context.Background(), "task_claim", `{}`), `missing required argument "id"`)
	mustErr(t, s.Call(context.Background(), "task_claim", `{"id":""}`), `"id" must not be empty`)
	f.err = errors.New("t3 is owned by bob")
	mustErr(t, s.Call(context.Background(), "task_claim", `{"id":"t3"}`), "could not claim t3: t3 is owned by bob")
}

func TestTaskUpdate(t *testing.T) {
	env, f := taskEnv(t, "alice")
	s := ForTeammate(env)
	mustOK(t, s.Call(context.Background(), "task_update", `{"id":"t3","status":"completed","note":"done in a.go"}`), "t3 is completed")
	mustOK(t, s.Call(context.Background(), "task_update", `{"id":"t3","blocked_by":[]}`), "t3 is")
	if len(f.calls) != 2 || f.calls[0].status != "completed" || f.calls[0].note != "done in a.go" || f.calls[0].blockedBy != nil {
		t.Fatalf("first call = %+v", f.calls)
	}
	if f.calls[1].blockedBy == nil || len(f.calls[1].blockedBy) != 0 {
		t.Fatalf("an explicit empty blocked_by must reach the board as empty, not nil: %+v", f.calls[1])
	}
	refusals := []struct{ args, want string }{
		{`{"id":"t3","status":"done"}`, `status "done" is not one of`},
		{`{"id":"t3"}`, "say what to change"},
		{`{"status":"completed"}`, `missing required argument "id"`},
	}
	for _, r := range refusals {
		mustErr(t, s.Call(context.Background(), "task_update", r.args), r.want)
	}
	if len(f.calls) != 2 {
		t.Fatalf("the board was called for refused arguments: %+v", f.calls)
	}
	f.err = errors.New("t3 is owned by bob")
	mustErr(t, s.Call(context.Background(), "task_update", `{"id":"t3","status":"pending"}`), "could not update t3: t3 is owned by bob")
}
