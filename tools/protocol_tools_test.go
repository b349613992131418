package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

type protoCall struct {
	method, from, arg string
	approve           bool
	text              string
}

// fakeProtocols records calls; err, if set, is returned instead.
type fakeProtocols struct {
	calls []protoCall
	err   error
}

func (f *fakeProtocols) RequestShutdown(ctx context.Context, from, name, reason string) (string, error) {
	f.calls = append(f.calls, protoCall{"RequestShutdown", from, name, false, reason})
	return "asked", f.err
}

func (f *fakeProtocols) RespondShutdown(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	f.calls = append(f.calls, protoCall{"RespondShutdown", from, id, approve, reason})
	return "answered", f.err
}

func (f *fakeProtocols) SubmitPlan(ctx context.Context, from, plan string) (string, error) {
	f.calls = append(f.calls, protoCall{"SubmitPlan", from, "", false, plan})
	return "submitted", f.err
}

func (f *fakeProtocols) ReviewPlan(ctx context.Context, from, id string, approve bool, feedback string) (string, error) {
	f.calls = append(f.calls, protoCall{"ReviewPlan", from, id, approve, feedback})
	return "reviewed", f.err
}

type closedGate struct{}

func (closedGate) WriteAllowed() (bool, string) { return false, "you are in plan mode" }

func TestProtocolToolsAreGivenByRole(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.Protocols = &fakeProtocols{}
	lead, mate := ForLead(env), ForTeammate(env)
	for _, c := range []struct {
		set  *Set
		name string
		want bool
	}{
		{lead, ShutdownTeammateName, true}, {lead, ReviewPlanName, true}, {lead, RespondShutdownName, false},
		{mate, RespondShutdownName, true}, {mate, ShutdownTeammateName, false}, {mate, SubmitPlanName, false},
	} {
		if c.set.Has(c.name) != c.want {
			t.Errorf("%s: has %v, want %v", c.name, !c.want, c.want)
		}
	}
	env.PlanMode = true
	if !ForTeammate(env).Has(SubmitPlanName) {
		t.Error("a plan-mode teammate lacks submit_plan")
	}
	env.Protocols = nil
	if ForLead(env).Has(ShutdownTeammateName) {
		t.Error("protocol tools without Protocols")
	}
}

func TestProtocolToolCalls(t *testing.T) {
	env, _, _, _ := testEnv(t)
	p := &fakeProtocols{}
	env.Protocols, env.PlanMode = p, true
	ctx := context.Background()
	lead, mate := ForLead(env), ForTeammate(env)
	mustOK(t, lead.Call(ctx, ShutdownTeammateName, `{"name":"alice","reason":"done"}`), "asked")
	mustErr(t, lead.Call(ctx, ShutdownTeammateName, `{"name":"../x","reason":"done"}`), "may only contain")
	mustErr(t, lead.Call(ctx, ShutdownTeammateName, `{"name":"alice"}`), "reason")
	mustOK(t, mate.Call(ctx, RespondShutdownName, `{"request_id":"shutdown-1","approve":true}`), "answered")
	mustErr(t, mate.Call(ctx, RespondShutdownName, `{"request_id":"shutdown-1","approve":false}`), "needs a reason")
	mustErr(t, mate.Call(ctx, RespondShutdownName, `{"request_id":"shutdown-1"}`), "approve")
	mustOK(t, mate.Call(ctx, SubmitPlanName, `{"plan":"step 1"}`), "submitted")
	mustErr(t, mate.Call(ctx, SubmitPlanName, `{"plan":"  "}`), "plan")
	mustOK(t, lead.Call(ctx, ReviewPlanName, `{"request_id":"plan-1","approve":false,"feedback":"add tests"}`), "reviewed")
	mustErr(t, lead.Call(ctx, ReviewPlanName, `{"request_id":"plan-1","approve":false}`), "needs feedback")
	want := []protoCall{
		{"RequestShutdown", env.Agent, "alice", false, "done"},
		{"RespondShutdown", env.Agent, "shutdown-1", true, ""},
		{"SubmitPlan", env.Agent, "", false, "step 1"},
		{"ReviewPlan", env.Agent, "plan-1", false, "add tests"},
	}
	if len(p.calls) != len(want) {
		t.Fatalf("calls %+v, want %+v", p.calls, want)
	}
	for i := range want {
		if p.calls[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, p.calls[i], want[i])
		}
	}
	p.err = errors.New("no open shutdown request")
	mustErr(t, mate.Call(ctx, RespondShutdownName, `{"request_id":"x","approve":true}`), "no open shutdown request")
}

func TestClosedGateRefusesWritesAndAllowsReading(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.Gate = closedGate{}
	ctx := context.Background()
	set := ForTeammate(env)
	root := env.Workspace.Root
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, set.Call(ctx, WriteFileName, `{"path":"b.txt","content":"x"}`), "plan mode")
	mustErr(t, set.Call(ctx, EditFileName, `{"path":"a.txt","old_text":"hello","new_text":"bye"}`), "plan mode")
	mustErr(t, set.Call(ctx, BashName, `{"command":"touch c.txt"}`), "read-only")
	mustErr(t, set.Call(ctx, BashName, `{"command":"cat a.txt > d.txt"}`), "read-only")
	mustOK(t, set.Call(ctx, BashName, `{"command":"cat a.txt | grep hel"}`), "hello")
	mustOK(t, set.Call(ctx, ReadFileName, `{"path":"a.txt"}`), "hello")
	for _, f := range []string{"b.txt", "c.txt", "d.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was written through a closed gate", f)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "hello\n" {
		t.Errorf("a.txt changed: %q", data)
	}
}

func TestReadOnlyCommand(t *testing.T) {
	cases := []struct {
		cmd  string
		want bool
	}{
		{"ls -la", true},
		{"cat a.txt | grep x | wc -l", true},
		{"git status && git diff HEAD", true},
		{"find . -name '*.go'", true},
		{"go vet ./...", true},
		{"rm -rf x", false},
		{"cat a > b", false},
		{"echo $(rm x)", false},
		{"echo `rm x`", false},
		{"ls & rm x", false},
		{"ls; rm x", false},
		{"find . -delete", false},
		{"find . -exec rm {} ;", false},
		{"git commit -m x", false},
		{"git branch new", false},
		{"sort -o out.txt in.txt", false},
		{"git diff --output=x", false},
		{"go test ./...", false},
		{"python3 -c 'print(1)'", false},
		{"", false},
		{"ls\nrm x", false},
		// The bash escapes, for when there is no sandbox.
		{"uniq notes.txt out", false},
		{"uniq -c notes.txt", true},
		{"find . -fprint0 f", false},
		{"file -C -m x", false},
		{"file -bC -m x", false},
		{"file notes.txt", true},
		{"git grep -O'rm' x", false},
		{"git grep -Orm x", false},
		{"git grep --open-files-in-pager=rm x", false},
		{"git grep -n x", true},
	}
	for _, c := range cases {
		if got := ReadOnlyCommand(c.cmd); got != c.want {
			t.Errorf("ReadOnlyCommand(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
}
