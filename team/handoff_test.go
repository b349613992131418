package team

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// handoffWatch records each side's handoff states and, as each handoff
// message is delivered, who owns the watched task on the board.
type handoffWatch struct {
	board *board.Board
	task  string

	mu      sync.Mutex
	states  map[string][]registry.HandoffStatus // agent → states, in order
	ownerAt map[inbox.MessageType]string        // message type → owner of task at its delivery
	ch      chan struct{}
}

func (w *handoffWatch) on(e event.Event) {
	hc, isHandoff := e.Payload.(event.HandoffChanged)
	msg, isMessage := e.Payload.(event.MessageDelivered)
	switch {
	case isHandoff:
		w.mu.Lock()
		w.states[e.Agent] = append(w.states[e.Agent], hc.State)
		w.mu.Unlock()
	case isMessage && (strings.HasPrefix(string(msg.Type), "handoff_") || msg.Type == handoff.TypeContextTransfer):
		owner := "?"
		if f, err := w.board.Read(context.Background()); err == nil {
			if i := f.Find(w.task); i >= 0 {
				owner = f.Tasks[i].Owner
			}
		}
		w.mu.Lock()
		w.ownerAt[msg.Type] = owner
		w.mu.Unlock()
	default:
		return
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// wait blocks until agent's side reached state.
func (w *handoffWatch) wait(t *testing.T, agent string, state registry.HandoffStatus) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		ok := slices.Contains(w.states[agent], state)
		seen := append([]registry.HandoffStatus(nil), w.states[agent]...)
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-w.ch:
		case <-deadline:
			t.Fatalf("%s's handoff never reached %s; saw %v", agent, state, seen)
		}
	}
}

func (w *handoffWatch) statesOf(agent string) []registry.HandoffStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]registry.HandoffStatus(nil), w.states[agent]...)
}

// handoffTeam opens a team whose handoff events and board owners at each
// handoff message (of task t1) are watched, as are its status events.
func handoffTeam(t *testing.T, srv *fakellm.Server, opts Options) (*Team, *handoffWatch, *statusWatcher) {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hw := &handoffWatch{board: board.New(ws.TasksPath()), task: "t1", states: map[string][]registry.HandoffStatus{}, ownerAt: map[inbox.MessageType]string{}, ch: make(chan struct{}, 1)}
	sw := newStatusWatcher()
	opts.Workspace = ws
	opts.OnEvent = func(e event.Event) { sw.on(e); hw.on(e) }
	return newTestTeam(t, srv, opts), hw, sw
}

// spawnIdle spawns teammates and waits until each is idle.
func spawnIdle(t *testing.T, tm *Team, sw *statusWatcher, nameRoles ...string) {
	t.Helper()
	for i := 0; i < len(nameRoles); i += 2 {
		if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: nameRoles[i], Role: nameRoles[i+1], Prompt: "stand by"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(nameRoles); i += 2 {
		sw.wait(t, nameRoles[i], string(registry.StatusIdle))
	}
}

// boardTask creates a task and lets owner claim it.
func boardTask(t *testing.T, tm *Team, owner, subject, role string) board.Task {
	t.Helper()
	ctx := context.Background()
	task, err := tm.Board().Create(ctx, inbox.LeadName, board.NewTask{Subject: subject, Description: "the details of " + subject, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	if task, _, err = tm.Board().Claim(ctx, task.ID, owner); err != nil {
		t.Fatal(err)
	}
	return task
}

func ownerOf(t *testing.T, tm *Team, id string) string {
	t.Helper()
	f, err := tm.Board().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	i := f.Find(id)
	if i < 0 {
		t.Fatalf("%s is not on the board", id)
	}
	return f.Tasks[i].Owner
}

// handoffsOf is a member's handoff states in the registry.
func handoffsOf(t *testing.T, tm *Team, name string) []registry.HandoffState {
	t.Helper()
	return memberOf(t, tm, name).Handoffs
}

// typesIn lists the handoff message types with correlation id in an inbox.
func typesIn(t *testing.T, tm *Team, name, id string) []inbox.MessageType {
	t.Helper()
	msgs, _, err := tm.Mailbox().ReadAll(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	var types []inbox.MessageType
	for _, m := range msgs {
		if m.CorrelationID == id {
			types = append(types, m.Type)
		}
	}
	return types
}

// TestHandoffOfABoardTaskByTheLead: the lead claims t1, writes and edits a
// file, and hands t1 to idle bob. Bob's runtime accepts, the lead's sends
// the context (with the file it touched), bob's acknowledges, and only then
// is bob the owner on the board; bob is woken with the context.
func TestHandoffOfABoardTaskByTheLead(t *testing.T) {
	call := func(name, args string) fakellm.ToolCall { return fakellm.ToolCall{Name: name, Args: args} }
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("task_create", `{"subject":"write the parser","description":"parse the config format","role":"programmer"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t1"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"parser.go","content":"package parser\n"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("edit_file", `{"path":"parser.go","old_text":"package parser","new_text":"package parser // v1"}`)}},
			{Content: "bob is the parser expert, so he should finish it", ToolCalls: []fakellm.ToolCall{
				call("handoff", `{"to":"bob","task":"t1","reason":"bob knows parsers","context":"parser.go has the package line; the grammar is left"}`)}},
			{Content: "handed over"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
	srv := fakellm.New(script)
	defer srv.Close()
	tm, hw, sw := handoffTeam(t, srv, Options{})
	spawnIdle(t, tm, sw, "bob", "programmer")
	if _, err := tm.Run(context.Background(), "build the parser"); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}

	// The tool said it completed, and the board changed owner only at the end.
	reqs := srv.Requests("lead")
	var result openai.ChatCompletionMessage
	for _, m := range reqs[5].Messages {
		if m.Role == "tool" && strings.Contains(m.Content, "handoff-") {
			result = m
		}
	}
	if !strings.Contains(result.Content, "Handed t1") {
		t.Fatalf("handoff tool result: %+v", result)
	}
	id := requestIDFrom(t, result.Content)
	if !strings.HasPrefix(id, "handoff-") {
		t.Fatalf("request id %q", id)
	}
	if got := ownerOf(t, tm, "t1"); got != "bob" {
		t.Fatalf("t1 is owned by %q after the handoff, want bob", got)
	}
	hw.mu.Lock()
	ownerAt := hw.ownerAt
	hw.mu.Unlock()
	for _, typ := range []inbox.MessageType{handoff.TypeHandoffRequest, handoff.TypeHandoffAccept, handoff.TypeContextTransfer, handoff.TypeHandoffComplete} {
		if ownerAt[typ] != "lead" {
			t.Errorf("at %s t1 was owned by %q, want lead (it changes owner only after handoff_complete)", typ, ownerAt[typ])
		}
	}

	// Every step is linked by the request id, in the inbox of the agent it is for.
	if got := typesIn(t, tm, "bob", id); !slices.Equal(got, []inbox.MessageType{handoff.TypeHandoffRequest, handoff.TypeContextTransfer}) {
		t.Errorf("bob's inbox has %v for %s", got, id)
	}
	if got := typesIn(t, tm, "lead", id); !slices.Equal(got, []inbox.MessageType{handoff.TypeHandoffAccept, handoff.TypeHandoffComplete}) {
		t.Errorf("the lead's inbox has %v for %s", got, id)
	}
	_, p := findReply(t, tm, "bob", handoff.TypeContextTransfer, id)
	raw, _ := json.Marshal(p)
	var ctxp handoff.Payload
	if err := json.Unmarshal(raw, &ctxp); err != nil {
		t.Fatal(err)
	}
	if ctxp.RequestID != id || ctxp.TaskID != "t1" || ctxp.Description != "parse the config format" ||
		!strings.Contains(ctxp.Summary, "grammar is left") || !slices.Equal(ctxp.FilesTouched, []string{"parser.go"}) ||
		!slices.Contains(ctxp.Done, "edit_file parser.go") || !slices.Contains(ctxp.Decisions, "bob is the parser expert, so he should finish it") {
		t.Errorf("context_transfer payload %+v", ctxp)
	}

	// Bob was woken with the context: his model read it.
	var read bool
	for _, r := range srv.Requests("bob") {
		for _, m := range r.Messages {
			read = read || (strings.Contains(m.Content, `type="context_transfer"`) && strings.Contains(m.Content, "grammar is left"))
		}
	}
	if !read {
		t.Error("bob's model never saw the context")
	}

	// Both sides' states, in events and in the registry.
	if got := hw.statesOf("lead"); !slices.Equal(got, []registry.HandoffStatus{registry.HandoffAwaitingAccept, registry.HandoffContextPreparing, registry.HandoffAwaitingAck, registry.HandoffCompleted}) {
		t.Errorf("the lead's states %v", got)
	}
	if got := hw.statesOf("bob"); !slices.Equal(got, []registry.HandoffStatus{registry.HandoffAwaitingContext, registry.HandoffCompleted}) {
		t.Errorf("bob's states %v", got)
	}
	hs := handoffsOf(t, tm, "bob")
	if len(hs) != 1 || hs[0].ID != id || hs[0].Role != registry.HandoffReceiver || hs[0].Peer != "lead" || hs[0].TaskID != "t1" || hs[0].State != registry.HandoffCompleted {
		t.Fatalf("bob's registry handoffs %+v", hs)
	}
	cfg, err := tm.Registry().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if lh := cfg.LeadHandoffs; len(lh) != 1 || lh[0].ID != id || lh[0].Role != registry.HandoffSender || lh[0].Peer != "bob" || lh[0].State != registry.HandoffCompleted {
		t.Fatalf("the lead's side in the registry: %+v", lh)
	}
}

// TestHandoffOfFreeTextWorkBetweenTeammates: work not on the board is handed
// over too, and the sender's side is in the registry.
func TestHandoffOfFreeTextWorkBetweenTeammates(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm, hw, sw := handoffTeam(t, srv, Options{})
	spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
	out, err := tm.Protocols().Handoff(context.Background(), "alice", tools.HandoffSpec{To: "bob", Task: "investigate the flaky test", Reason: "I must switch", Context: "it fails one run in ten"})
	if err != nil {
		t.Fatal(err)
	}
	id := requestIDFrom(t, out)
	if !strings.Contains(out, "Handed the task") {
		t.Fatalf("result %q", out)
	}
	hw.wait(t, "bob", registry.HandoffCompleted)
	a, b := handoffsOf(t, tm, "alice"), handoffsOf(t, tm, "bob")
	if len(a) != 1 || a[0].ID != id || a[0].Role != registry.HandoffSender || a[0].Peer != "bob" || a[0].State != registry.HandoffCompleted || a[0].TaskID != "" {
		t.Errorf("alice's handoffs %+v", a)
	}
	if len(b) != 1 || b[0].Role != registry.HandoffReceiver || b[0].Peer != "alice" || b[0].State != registry.HandoffCompleted {
		t.Errorf("bob's handoffs %+v", b)
	}
	if got := typesIn(t, tm, "alice", id); !slices.Equal(got, []inbox.MessageType{handoff.TypeHandoffAccept, handoff.TypeHandoffComplete}) {
		t.Errorf("alice's inbox has %v", got)
	}
}

// TestHandoffBackToTheLead: the lead takes any task back; the board says so.
func TestHandoffBackToTheLead(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm, hw, sw := handoffTeam(t, srv, Options{})
	spawnIdle(t, tm, sw, "alice", "programmer")
	boardTask(t, tm, "alice", "test the parser", "tester")
	out, err := tm.Protocols().Handoff(context.Background(), "alice", tools.HandoffSpec{To: "lead", Task: "t1", Reason: "not my role", Context: "untouched"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ownerOf(t, tm, "t1"); got != "lead" || !strings.Contains(out, "Handed t1") {
		t.Fatalf("t1 owned by %q; result %q", got, out)
	}
	if got := typesIn(t, tm, "lead", requestIDFrom(t, out)); !slices.Equal(got, []inbox.MessageType{handoff.TypeHandoffRequest, handoff.TypeContextTransfer}) {
		t.Errorf("the lead's inbox has %v", got)
	}
	if got := hw.statesOf("lead"); !slices.Equal(got, []registry.HandoffStatus{registry.HandoffAwaitingContext, registry.HandoffCompleted}) {
		t.Errorf("the lead's states %v", got)
	}
}

// wantRejected checks a rejected handoff: the sender got the reject, the
// receiver no context, and the task stayed with the sender.
func wantRejected(t *testing.T, tm *Team, out, sender, receiver, taskID, why string) {
	t.Helper()
	id := requestIDFrom(t, out)
	if !strings.Contains(out, "rejected") || !strings.Contains(out, why) {
		t.Errorf("result %q does not report the reject (%q)", out, why)
	}
	msg, p := findReply(t, tm, sender, handoff.TypeHandoffReject, id)
	if msg.From != receiver || p["by"] != "runtime" || !strings.Contains(fmt.Sprint(p["reason"]), why) {
		t.Errorf("reject %+v payload %v", msg, p)
	}
	if got := typesIn(t, tm, receiver, id); !slices.Equal(got, []inbox.MessageType{handoff.TypeHandoffRequest}) {
		t.Errorf("%s's inbox has %v, want only the request", receiver, got)
	}
	if got := ownerOf(t, tm, taskID); got != sender {
		t.Errorf("%s is owned by %q after a reject, want %s", taskID, got, sender)
	}
	s, r := handoffsOf(t, tm, sender), handoffsOf(t, tm, receiver)
	if len(s) == 0 || s[len(s)-1].State != registry.HandoffFailed || !strings.Contains(s[len(s)-1].Reason, why) {
		t.Errorf("%s's handoffs %+v", sender, s)
	}
	if len(r) == 0 || r[len(r)-1].State != registry.HandoffFailed || !strings.Contains(r[len(r)-1].Reason, "rejected") {
		t.Errorf("%s's handoffs %+v", receiver, r)
	}
}

func TestHandoffRejectedWhenTheReceiverIsBusy(t *testing.T) {
	release := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "bob" && c.N == 1 {
			<-release // bob's second cycle holds its model call: he is working
		}
		return fakellm.Reply{Content: "ok"}
	})
	defer srv.Close()
	defer close(release)
	tm, _, sw := handoffTeam(t, srv, Options{})
	spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
	boardTask(t, tm, "alice", "write the parser", "")
	if err := tm.Messenger().Send(context.Background(), "lead", "bob", "another job"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "bob working", func() bool { return memberOf(t, tm, "bob").Status == registry.StatusWorking })
	out, err := tm.Protocols().Handoff(context.Background(), "alice", tools.HandoffSpec{To: "bob", Task: "t1", Reason: "r", Context: "c"})
	if err != nil {
		t.Fatal(err)
	}
	wantRejected(t, tm, out, "alice", "bob", "t1", "busy")
}

func TestHandoffRejectedWhenTheRoleDoesNotFit(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm, _, sw := handoffTeam(t, srv, Options{})
	spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
	boardTask(t, tm, "alice", "test the parser", "tester")
	out, err := tm.Protocols().Handoff(context.Background(), "alice", tools.HandoffSpec{To: "bob", Task: "t1", Reason: "r", Context: "c"})
	if err != nil {
		t.Fatal(err)
	}
	wantRejected(t, tm, out, "alice", "bob", "t1", "role does not fit")
}

// TestHandoffStepTimeouts: a runtime that never reacts to one step's message
// fails the handoff after the step's timeout; the task stays with the
// sender, who is told why, and so is a receiver that had accepted. A late
// answer afterwards changes nothing.
func TestHandoffStepTimeouts(t *testing.T) {
	cases := []struct {
		stuck        inbox.MessageType
		why          string
		receiverTold bool
	}{
		{handoff.TypeHandoffRequest, "no answer to the handoff request", false},
		{handoff.TypeContextTransfer, "no acknowledgement of the context", true},
		{handoff.TypeHandoffComplete, "no acknowledgement of the context", true},
	}
	for _, c := range cases {
		t.Run(string(c.stuck), func(t *testing.T) {
			srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
			defer srv.Close()
			tm, hw, sw := handoffTeam(t, srv, Options{HandoffTimeout: 150 * time.Millisecond})
			spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
			boardTask(t, tm, "alice", "write the parser", "")
			var stuck *handoff.Handoff
			tm.handoffs.SetStall(func(typ inbox.MessageType, h *handoff.Handoff) bool {
				if typ == c.stuck {
					stuck = h
					return true
				}
				return false
			})
			out, err := tm.Protocols().Handoff(context.Background(), "alice", tools.HandoffSpec{To: "bob", Task: "t1", Reason: "r", Context: "c"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "under way") {
				t.Fatalf("a stuck handoff reported %q", out)
			}
			id := requestIDFrom(t, out)
			hw.wait(t, "alice", registry.HandoffFailed)
			hw.wait(t, "bob", registry.HandoffFailed)

			msg, p := findReply(t, tm, "alice", handoff.TypeHandoffFailed, id)
			if !strings.Contains(msg.Content, c.why) || !strings.Contains(msg.Content, "stays yours") || p["by"] != "runtime" {
				t.Errorf("alice was told %+v %v", msg, p)
			}
			if told := slices.Contains(typesIn(t, tm, "bob", id), handoff.TypeHandoffFailed); told != c.receiverTold {
				t.Errorf("bob told of the failure: %v, want %v", told, c.receiverTold)
			}
			if got := ownerOf(t, tm, "t1"); got != "alice" {
				t.Errorf("t1 is owned by %q after a failed handoff, want alice", got)
			}
			a := handoffsOf(t, tm, "alice")
			if len(a) != 1 || a[0].State != registry.HandoffFailed || !strings.Contains(a[0].Reason, c.why) {
				t.Errorf("alice's handoffs %+v", a)
			}

			// The stuck runtime wakes up late: nothing moves.
			tm.handoffs.SetStall(nil)
			tm.handoffs.React(t.Context(), c.stuck, stuck)
			tm.handoffs.React(t.Context(), handoff.TypeHandoffComplete, stuck)
			if got := ownerOf(t, tm, "t1"); got != "alice" {
				t.Errorf("a late answer gave t1 to %q", got)
			}
			if slices.Contains(typesIn(t, tm, "alice", id), handoff.TypeHandoffComplete) && c.stuck != handoff.TypeHandoffComplete {
				t.Error("a late answer completed a failed handoff")
			}
			if a := handoffsOf(t, tm, "alice"); a[0].State != registry.HandoffFailed {
				t.Errorf("after a late answer alice's side is %s", a[0].State)
			}
		})
	}
}

func TestHandoffRefusals(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm, _, sw := handoffTeam(t, srv, Options{HandoffTimeout: time.Minute})
	spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
	ctx := context.Background()
	boardTask(t, tm, "alice", "write the parser", "")
	boardTask(t, tm, "bob", "write the lexer", "")
	done := boardTask(t, tm, "alice", "write the docs", "")
	if _, _, err := tm.Board().Update(ctx, done.ID, "alice", board.TaskCompleted, "done"); err != nil {
		t.Fatal(err)
	}
	if err := tm.Registry().Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: "carol", Role: "programmer", Status: registry.StatusIdle, PID: 1, CreatedAt: time.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	spec := func(to, task string) tools.HandoffSpec {
		return tools.HandoffSpec{To: to, Task: task, Reason: "r", Context: "c"}
	}
	cases := []struct {
		name string
		spec tools.HandoffSpec
		want string
	}{
		{"to itself", spec("alice", "t1"), "yourself"},
		{"unknown agent", spec("nobody", "t1"), "no agent named nobody"},
		{"the person", spec("user", "t1"), "person"},
		{"another process", spec("carol", "t1"), "not run by this agentteam process"},
		{"someone else's task", spec("bob", "t2"), "owned by bob"},
		{"completed task", spec("bob", done.ID), "already completed"},
		{"unknown task", spec("bob", "t99"), "no such task"},
	}
	for _, c := range cases {
		if _, err := tm.Protocols().Handoff(ctx, "alice", c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	// While one handoff of t1 is open, a second is refused.
	tm.handoffs.SetStall(func(typ inbox.MessageType, h *handoff.Handoff) bool { return typ == handoff.TypeHandoffRequest })
	if _, err := tm.Protocols().Handoff(ctx, "alice", spec("bob", "t1")); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Protocols().Handoff(ctx, "alice", spec("lead", "t1")); err == nil || !strings.Contains(err.Error(), "already being handed") {
		t.Errorf("a second handoff of t1: %v", err)
	}
	if m := memberOf(t, tm, "carol"); len(m.Handoffs) != 0 {
		t.Errorf("a refused handoff left state: %+v", m.Handoffs)
	}
}
