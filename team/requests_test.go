package team

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// requestLog records a team's protocol request events, in order.
type requestLog struct {
	mu     sync.Mutex
	events []event.Payload
}

func (l *requestLog) on(e event.Event) {
	switch e.Payload.(type) {
	case event.RequestOpened, event.RequestAnswered, event.RequestExpired:
		l.mu.Lock()
		l.events = append(l.events, e.Payload)
		l.mu.Unlock()
	}
}

// of returns the events of one request.
func (l *requestLog) of(id string) []event.Payload {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event.Payload
	for _, p := range l.events {
		var ref event.RequestRef
		switch p := p.(type) {
		case event.RequestOpened:
			ref = p.RequestRef
		case event.RequestAnswered:
			ref = p.RequestRef
		case event.RequestExpired:
			ref = p.RequestRef
		}
		if ref.ID == id {
			out = append(out, p)
		}
	}
	return out
}

func requestTeam(t *testing.T, srv *fakellm.Server, opts Options) (*Team, *statusWatcher, *requestLog) {
	t.Helper()
	w, log := newStatusWatcher(), &requestLog{}
	opts.OnEvent = func(e event.Event) { w.on(e); log.on(e) }
	return newTestTeam(t, srv, opts), w, log
}

// checkOpened: a request's first event opens it, with its kind, parties,
// what it asks about and a deadline ahead.
func checkOpened(t *testing.T, got []event.Payload, want event.RequestRef, text string) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("request %s was never opened", want.ID)
	}
	o, ok := got[0].(event.RequestOpened)
	if !ok || o.RequestRef != want || o.Text != text || !o.Deadline.After(time.Now().Add(-time.Minute)) {
		t.Fatalf("request %s opened as %+v, want %+v asking %q", want.ID, got[0], want, text)
	}
}

// TestRequestsAreLoggedWithTheirOutcome: each protocol request is opened,
// then answered (by whom, with what) or expired (and what was done), as
// fields of its events.
func TestRequestsAreLoggedWithTheirOutcome(t *testing.T) {
	ctx := context.Background()
	t.Run("shutdown approved by the runtime", func(t *testing.T) {
		srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ready"}))
		defer srv.Close()
		tm, w, log := requestTeam(t, srv, Options{})
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
		got := log.of(id)
		ref := event.RequestRef{ID: id, RequestKind: event.RequestShutdown, From: "lead", To: "alice"}
		checkOpened(t, got, ref, "the work is done")
		if len(got) != 2 || got[1] != (event.RequestAnswered{RequestRef: ref, By: event.ByRuntime, Outcome: event.OutcomeApproved, Reason: "alice was idle"}) {
			t.Fatalf("events %+v", got)
		}
	})
	t.Run("shutdown forced", func(t *testing.T) {
		srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"sleep 30"}`}}}
		})
		defer srv.Close()
		tm, w, log := requestTeam(t, srv, Options{ShutdownTimeout: 300 * time.Millisecond})
		if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "sleep"}); err != nil {
			t.Fatal(err)
		}
		w.wait(t, "alice", "running bash")
		out, err := tm.Protocols().RequestShutdown(ctx, "user", "alice", "stop")
		if err != nil {
			t.Fatal(err)
		}
		id := requestIDFrom(t, out)
		w.wait(t, "alice", string(registry.StatusShutdown))
		got := log.of(id)
		ref := event.RequestRef{ID: id, RequestKind: event.RequestShutdown, From: "user", To: "alice"}
		checkOpened(t, got, ref, "stop")
		if len(got) != 2 {
			t.Fatalf("events %+v", got)
		}
		if x, ok := got[1].(event.RequestExpired); !ok || x.RequestRef != ref || x.Outcome != event.OutcomeForced || x.Reason == "" {
			t.Fatalf("events %+v", got)
		}
	})
	t.Run("plan reviewed by the person", func(t *testing.T) {
		srv := fakellm.New(planScript)
		defer srv.Close()
		tm, w, log := requestTeam(t, srv, Options{})
		if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
			t.Fatal(err)
		}
		w.wait(t, "alice", "plan awaiting approval")
		id, ok := tm.Protocols().OpenPlanRequest("alice")
		if !ok {
			t.Fatal("no plan waiting")
		}
		if _, err := tm.Protocols().ReviewPlan(ctx, "user", id, true, "go ahead"); err != nil {
			t.Fatal(err)
		}
		got := log.of(id)
		ref := event.RequestRef{ID: id, RequestKind: event.RequestPlanApproval, From: "alice", To: "lead"}
		checkOpened(t, got, ref, "write out.txt")
		if len(got) != 2 || got[1] != (event.RequestAnswered{RequestRef: ref, By: "user", Outcome: event.OutcomeApproved, Reason: "go ahead"}) {
			t.Fatalf("events %+v", got)
		}
	})
	t.Run("plan not reviewed in time", func(t *testing.T) {
		srv := fakellm.New(planScript)
		defer srv.Close()
		tm, w, log := requestTeam(t, srv, Options{PlanTimeout: 200 * time.Millisecond})
		if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
			t.Fatal(err)
		}
		w.wait(t, "alice", "plan rejected")
		log.mu.Lock()
		first, _ := log.events[0].(event.RequestOpened)
		log.mu.Unlock()
		got := log.of(first.ID)
		ref := event.RequestRef{ID: first.ID, RequestKind: event.RequestPlanApproval, From: "alice", To: "lead"}
		checkOpened(t, got, ref, "write out.txt")
		if len(got) != 2 {
			t.Fatalf("events %+v", got)
		}
		if x, ok := got[1].(event.RequestExpired); !ok || x.RequestRef != ref || x.Outcome != event.OutcomeExpired {
			t.Fatalf("events %+v", got)
		}
	})
}

// TestHandoffRequestsAreLogged: a handoff is a request too, from the
// sender to the receiver, about the task; it ends completed, rejected by
// the receiver's runtime, or expired when a step gets no answer.
func TestHandoffRequestsAreLogged(t *testing.T) {
	setup := func(t *testing.T, opts Options) (*Team, *handoffWatch, *requestLog) {
		srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
		t.Cleanup(srv.Close)
		ws, err := workspace.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		hw := &handoffWatch{board: board.New(ws.TasksPath()), task: "t1", states: map[string][]registry.HandoffStatus{}, ownerAt: map[inbox.MessageType]string{}, ch: make(chan struct{}, 1)}
		sw, log := newStatusWatcher(), &requestLog{}
		opts.Workspace = ws
		opts.OnEvent = func(e event.Event) { sw.on(e); hw.on(e); log.on(e) }
		tm := newTestTeam(t, srv, opts)
		spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
		return tm, hw, log
	}
	ctx := context.Background()
	t.Run("completed", func(t *testing.T) {
		tm, hw, log := setup(t, Options{})
		out, err := tm.Protocols().Handoff(ctx, "alice", tools.HandoffSpec{To: "bob", Task: "investigate the flaky test", Reason: "r", Context: "c"})
		if err != nil {
			t.Fatal(err)
		}
		id := requestIDFrom(t, out)
		hw.wait(t, "bob", registry.HandoffCompleted)
		got := log.of(id)
		ref := event.RequestRef{ID: id, RequestKind: event.RequestHandoff, From: "alice", To: "bob"}
		checkOpened(t, got, ref, "investigate the flaky test")
		if len(got) != 2 || got[1] != (event.RequestAnswered{RequestRef: ref, By: event.ByRuntime, Outcome: event.OutcomeCompleted}) {
			t.Fatalf("events %+v", got)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		tm, _, log := setup(t, Options{})
		boardTask(t, tm, "alice", "test the parser", "tester")
		out, err := tm.Protocols().Handoff(ctx, "alice", tools.HandoffSpec{To: "bob", Task: "t1", Reason: "r", Context: "c"})
		if err != nil {
			t.Fatal(err)
		}
		got := log.of(requestIDFrom(t, out))
		if len(got) != 2 {
			t.Fatalf("events %+v", got)
		}
		if a, ok := got[1].(event.RequestAnswered); !ok || a.Outcome != event.OutcomeRejected || a.By != event.ByRuntime || a.Reason == "" {
			t.Fatalf("events %+v", got)
		}
	})
	t.Run("expired", func(t *testing.T) {
		tm, hw, log := setup(t, Options{HandoffTimeout: 150 * time.Millisecond})
		boardTask(t, tm, "alice", "write the parser", "")
		tm.handoffs.SetStall(func(typ inbox.MessageType, h *handoff.Handoff) bool { return typ == handoff.TypeHandoffRequest })
		out, err := tm.Protocols().Handoff(ctx, "alice", tools.HandoffSpec{To: "bob", Task: "t1", Reason: "r", Context: "c"})
		if err != nil {
			t.Fatal(err)
		}
		id := requestIDFrom(t, out)
		hw.wait(t, "alice", registry.HandoffFailed)
		hw.wait(t, "bob", registry.HandoffFailed) // the last write of a failing handoff: the team may close after it
		got := log.of(id)
		ref := event.RequestRef{ID: id, RequestKind: event.RequestHandoff, From: "alice", To: "bob"}
		checkOpened(t, got, ref, "write the parser")
		if len(got) != 2 {
			t.Fatalf("events %+v", got)
		}
		if x, ok := got[1].(event.RequestExpired); !ok || x.Outcome != event.OutcomeExpired || x.Reason == "" {
			t.Fatalf("events %+v", got)
		}
	})
}
