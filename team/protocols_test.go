package team

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

var correlationRe = regexp.MustCompile(`type="([a-z_]+)" id="[^"]*" correlation_id="([^"]+)"`)

// lastRequestID finds the correlation id of the newest message of a type
// in a model request, as a model would read it from the tags.
func lastRequestID(c fakellm.Call, typ inbox.MessageType) string {
	id := ""
	for _, m := range c.Req.Messages {
		for _, sub := range correlationRe.FindAllStringSubmatch(m.Content, -1) {
			if sub[1] == string(typ) {
				id = sub[2]
			}
		}
	}
	return id
}

// statusWatcher collects status events so tests wait on them, not on time.
type statusWatcher struct {
	mu   sync.Mutex
	seen map[string][]string
	ch   chan struct{}
}

func newStatusWatcher() *statusWatcher {
	return &statusWatcher{seen: map[string][]string{}, ch: make(chan struct{}, 1)}
}

func (w *statusWatcher) on(e event.Event) {
	var status, detail string
	switch p := e.Payload.(type) {
	case event.StatusChanged:
		status, detail = string(p.Status), p.Reason
	case event.Activity:
		detail = p.Words()
	default:
		return
	}
	w.mu.Lock()
	w.seen[e.Agent] = append(w.seen[e.Agent], status+"|"+detail)
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// wait blocks until agent has had an event whose status is want, or (for
// a want with a space) whose detail contains it.
func (w *statusWatcher) wait(t *testing.T, agent, want string) {
	t.Helper()
	match := func(s string) bool {
		status, detail, _ := strings.Cut(s, "|")
		return status == want || (strings.Contains(want, " ") && strings.Contains(detail, want))
	}
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		for _, s := range w.seen[agent] {
			if match(s) {
				w.mu.Unlock()
				return
			}
		}
		w.mu.Unlock()
		select {
		case <-w.ch:
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("%s never showed %q; saw %v", agent, want, w.seen[agent])
		}
	}
}

func protoTeam(t *testing.T, srv *fakellm.Server, opts Options) (*Team, *statusWatcher) {
	t.Helper()
	w := newStatusWatcher()
	opts.OnEvent = w.on
	return newTestTeam(t, srv, opts), w
}

// response is a protocol reply found in an inbox.
func findReply(t *testing.T, tm *Team, inboxName string, typ inbox.MessageType, correlation string) (inbox.Message, map[string]any) {
	t.Helper()
	msgs, _, err := tm.Mailbox().ReadAll(t.Context(), inboxName)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Type == typ && m.CorrelationID == correlation {
			var p map[string]any
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				t.Fatalf("payload of %s: %v", typ, err)
			}
			return m, p
		}
	}
	t.Fatalf("no %s with correlation_id %s in %s's inbox: %+v", typ, correlation, inboxName, msgs)
	return inbox.Message{}, nil
}

func requestIDFrom(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`request ([a-z]+-[0-9a-f]{8})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no request id in %q", out)
	}
	return m[1]
}

func memberOf(t *testing.T, tm *Team, name string) registry.Member {
	t.Helper()
	c, err := tm.Registry().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	i := c.Find(name)
	if i < 0 {
		t.Fatalf("%s not in the registry", name)
	}
	return c.Teammates[i]
}

func TestShutdownOfAnIdleTeammateIsApprovedByTheRuntime(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ready"}))
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "get ready"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", string(registry.StatusIdle))
	out, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "the work is done")
	if err != nil {
		t.Fatal(err)
	}
	id := requestIDFrom(t, out)
	w.wait(t, "alice", string(registry.StatusShutdown))
	msg, p := findReply(t, tm, "lead", protocol.TypeShutdownResponse, id)
	if p["approve"] != true || p["by"] != "runtime" || msg.From != "alice" {
		t.Fatalf("response %+v payload %v", msg, p)
	}
	if n := srv.CallsFor("alice"); n != 1 {
		t.Fatalf("alice made %d model calls; an idle teammate's shutdown needs none", n)
	}
	if m := memberOf(t, tm, "alice"); m.Status != registry.StatusShutdown {
		t.Fatalf("registry says %s", m.Status)
	}
	// The request itself is in alice's conversation: nothing was dropped.
	conv, _ := tm.Conversation("alice")
	if last := conv[len(conv)-1]; !strings.Contains(last.Content, string(protocol.TypeShutdownRequest)) {
		t.Fatalf("the request is not in alice's conversation: %+v", last)
	}
	if _, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "again"); err == nil {
		t.Fatal("a shut-down teammate was asked again without an error")
	}
}

// workingScript keeps a teammate busy with short bash calls until it sees
// a shutdown request, then answers with approve.
func workingScript(approve bool, reason string) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		if c.Agent != "alice" {
			return fakellm.Reply{Content: "ok"}
		}
		if id := lastRequestID(c, protocol.TypeShutdownRequest); id != "" {
			last := c.Req.Messages[len(c.Req.Messages)-1]
			if last.Role == "tool" && strings.Contains(last.Content, "keep working") {
				return fakellm.Reply{Content: "alice: finished the edit"}
			}
			if last.Role != "tool" || !strings.Contains(last.Content, "Shutdown approved") {
				args := fmt.Sprintf(`{"request_id":%q,"approve":%v,"reason":%q}`, id, approve, reason)
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "respond_shutdown", Args: args}}}
			}
		}
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"sleep 0.05"}`}}}
	}
}

func TestShutdownApprovedByAWorkingTeammate(t *testing.T) {
	srv := fakellm.New(workingScript(true, ""))
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "edit things"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", "running bash")
	out, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "stop now")
	if err != nil {
		t.Fatal(err)
	}
	id := requestIDFrom(t, out)
	w.wait(t, "alice", string(registry.StatusShutdown))
	_, p := findReply(t, tm, "lead", protocol.TypeShutdownResponse, id)
	if p["approve"] != true || p["by"] != "teammate" {
		t.Fatalf("payload %v", p)
	}
	calls := srv.CallsFor("alice")
	time.Sleep(200 * time.Millisecond) // a stopped teammate must make no more calls
	if srv.CallsFor("alice") != calls {
		t.Fatal("alice called the model after approving its shutdown")
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}

func TestShutdownRejectedByAWorkingTeammate(t *testing.T) {
	srv := fakellm.New(workingScript(false, "mid-edit of parser.go"))
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "edit things"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", "running bash")
	out, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "stop now")
	if err != nil {
		t.Fatal(err)
	}
	id := requestIDFrom(t, out)
	w.wait(t, "alice", string(registry.StatusIdle))
	msg, p := findReply(t, tm, "lead", protocol.TypeShutdownResponse, id)
	if p["approve"] != false || !strings.Contains(msg.Content, "mid-edit of parser.go") {
		t.Fatalf("response %+v payload %v", msg, p)
	}
	if m := memberOf(t, tm, "alice"); m.Status != registry.StatusIdle {
		t.Fatalf("after rejecting alice is %s, want idle", m.Status)
	}
}

func TestShutdownWithoutAnswerIsForcedAfterTheTimeout(t *testing.T) {
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"sleep 30"}`}}}
	})
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{ShutdownTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "sleep"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", "running bash")
	start := time.Now()
	out, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "stop")
	if err != nil {
		t.Fatal(err)
	}
	id := requestIDFrom(t, out)
	w.wait(t, "alice", string(registry.StatusShutdown))
	if time.Since(start) > 15*time.Second {
		t.Fatal("the forced shutdown waited for the bash call to end")
	}
	msg, p := findReply(t, tm, "lead", protocol.TypeShutdownResponse, id)
	if p["forced"] != true || !strings.Contains(msg.Content, "by force") {
		t.Fatalf("response %+v payload %v", msg, p)
	}
	if m := memberOf(t, tm, "alice"); m.Status != registry.StatusShutdown || !strings.Contains(m.Error, "forced") {
		t.Fatalf("registry %+v", m)
	}
}

// planScript: alice tries to write first, then submits a plan; after a
// rejection she submits again; after approval she writes.
func planScript(c fakellm.Call) fakellm.Reply {
	if c.Agent != "alice" {
		return fakellm.Reply{Content: "ok"}
	}
	last := c.Req.Messages[len(c.Req.Messages)-1]
	write := fakellm.ToolCall{Name: "write_file", Args: `{"path":"out.txt","content":"done"}`}
	switch {
	case strings.Contains(last.Content, `type="plan_approval_response"`) && strings.Contains(last.Content, "approved your plan"):
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{write}}
	case strings.Contains(last.Content, `type="plan_approval_response"`):
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "submit_plan", Args: `{"plan":"write out.txt, with tests"}`}}}
	case last.Role == "tool" && strings.Contains(last.Content, "Wrote"):
		return fakellm.Reply{Content: "alice: wrote out.txt"}
	case last.Role == "tool" && strings.Contains(last.Content, "plan mode"):
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "submit_plan", Args: `{"plan":"write out.txt"}`}}}
	case last.Role == "tool" && strings.Contains(last.Content, "Plan submitted"):
		return fakellm.Reply{Content: "alice: plan submitted"}
	}
	return fakellm.Reply{ToolCalls: []fakellm.ToolCall{write}}
}

func TestPlanModeRefusesWritesUntilTheLeadApproves(t *testing.T) {
	// Alice's first model call waits until the registry is checked: else
	// she may have submitted her plan already (seen 1 run in 200).
	gate := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" && c.N == 0 {
			<-gate
		}
		return planScript(c)
	})
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
		close(gate)
		t.Fatal(err)
	}
	m := memberOf(t, tm, "alice")
	close(gate)
	if !m.PlanMode || m.PlanState != registry.PlanDrafting {
		t.Fatalf("registry %+v", m)
	}
	w.wait(t, "alice", "plan awaiting approval")
	w.wait(t, "alice", string(registry.StatusIdle))
	out := filepath.Join(tm.Workspace().Root, "out.txt")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a plan-mode teammate wrote a file before approval")
	}
	reqs := srv.Requests("alice")
	if second := reqs[1].Messages; !strings.Contains(second[len(second)-1].Content, "plan mode") {
		t.Fatalf("the refused write did not say why: %+v", second[len(second)-1])
	}
	// The lead rejects the first plan with feedback.
	first := pendingPlan(t, tm)
	if _, err := tm.Protocols().ReviewPlan(ctx, "lead", first, false, "add tests"); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Protocols().ReviewPlan(ctx, "lead", first, true, ""); err == nil {
		t.Fatal("a plan request was answered twice")
	}
	w.wait(t, "alice", "plan rejected")
	// Alice resubmits; the lead approves; alice writes.
	second := waitPlan(t, tm, first)
	if _, err := tm.Protocols().ReviewPlan(ctx, "lead", second, true, "go"); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", "plan approved")
	testkit.Eventually(t, 20*time.Second, "alice's out.txt after approval", func() bool {
		data, err := os.ReadFile(out)
		return err == nil && string(data) == "done"
	})
	_, p := findReply(t, tm, "alice", protocol.TypePlanApprovalResponse, second)
	if p["approve"] != true || p["feedback"] != "go" {
		t.Fatalf("approval payload %v", p)
	}
	plans, _, _ := tm.Mailbox().ReadAll(ctx, "lead")
	var n int
	for _, m := range plans {
		if m.Type == protocol.TypePlanApprovalRequest {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("the lead got %d plan requests, want 2", n)
	}
}

func pendingPlan(t *testing.T, tm *Team) string {
	t.Helper()
	return waitPlan(t, tm, "")
}

// waitPlan waits for an open plan request other than not.
func waitPlan(t *testing.T, tm *Team, not string) string {
	t.Helper()
	var id string
	testkit.Eventually(t, 20*time.Second, "a plan request from alice", func() bool {
		id = tm.requests.OpenFor(event.RequestPlanApproval, "alice")
		return id != "" && id != not
	})
	return id
}

func TestPlanWithoutReviewTimesOutAndStaysReadOnly(t *testing.T) {
	srv := fakellm.New(planScript)
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{PlanTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", "plan rejected")
	msgs, _, _ := tm.Mailbox().ReadAll(ctx, "alice")
	var got bool
	for _, m := range msgs {
		if m.Type == protocol.TypePlanApprovalResponse && strings.Contains(m.Content, "did not review") {
			got = true
		}
	}
	if !got {
		t.Fatalf("alice was not told the review timed out: %+v", msgs)
	}
	if _, err := os.Stat(filepath.Join(tm.Workspace().Root, "out.txt")); err == nil {
		t.Fatal("a timed-out plan let alice write")
	}
}

func TestProtocolRefusals(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ready"}))
	defer srv.Close()
	tm, w := protoTeam(t, srv, Options{})
	ctx := context.Background()
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "get ready"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", string(registry.StatusIdle))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"unknown teammate", second(tm.Protocols().RequestShutdown(ctx, "lead", "nobody", "x")), "no agent named nobody"},
		{"teammate asks", second(tm.Protocols().RequestShutdown(ctx, "alice", "alice", "x")), "only the lead"},
		{"answer to nothing", second(tm.Protocols().RespondShutdown(ctx, "alice", "shutdown-00000000", true, "")), "no open shutdown request"},
		{"plan outside plan mode", second(tm.Protocols().SubmitPlan(ctx, "alice", "p")), "not in plan mode"},
		{"review of nothing", second(tm.Protocols().ReviewPlan(ctx, "lead", "plan-00000000", true, "")), "no plan waiting"},
		{"teammate reviews", second(tm.Protocols().ReviewPlan(ctx, "alice", "plan-00000000", true, "")), "only the lead"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, c.err, c.want)
		}
	}
}

func second(_ string, err error) error { return err }

func TestDeriveState(t *testing.T) {
	m := func(status registry.Status, cycles int) registry.Member {
		return registry.Member{Status: status, Cycles: cycles}
	}
	cases := []struct {
		name    string
		members []registry.Member
		want    string
	}{
		{"empty", nil, registry.StateInitializing},
		{"all queued", []registry.Member{m(registry.StatusQueued, 0), m(registry.StatusQueued, 0)}, registry.StateInitializing},
		{"one working", []registry.Member{m(registry.StatusWorking, 0), m(registry.StatusQueued, 0)}, registry.StateExecuting},
		{"queued again after work", []registry.Member{m(registry.StatusQueued, 1)}, registry.StateExecuting},
		{"all idle", []registry.Member{m(registry.StatusIdle, 1), m(registry.StatusShutdown, 2)}, registry.StateCompleted},
		{"some failed", []registry.Member{m(registry.StatusIdle, 1), m(registry.StatusFailed, 0)}, registry.StatePartial},
		{"all failed", []registry.Member{m(registry.StatusFailed, 1), m(registry.StatusFailed, 0)}, registry.StateFailed},
		{"failed and idle without results", []registry.Member{m(registry.StatusIdle, 0), m(registry.StatusFailed, 0)}, registry.StateFailed},
	}
	for _, c := range cases {
		if got := registry.DeriveState(c.members); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
