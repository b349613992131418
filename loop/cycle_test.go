package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

func TestCycleRunsToolCallsAndKeepsPairing(t *testing.T) {
	m := &fakeModel{t: t, steps: []step{
		calls(tc{"c1", "echo", `{"text":"hi"}`}, tc{"c2", "nope", `{}`}, tc{"c3", "echo", `{"text":`}),
		final("done"),
	}}
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: m, OnEvent: ev.add}, echo("echo", false))
	if err := a.Say(t.Context(), "start"); err != nil {
		t.Fatal(err)
	}
	cyc, err := a.RunCycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cyc.Final != "done" || cyc.Turns != 2 || cyc.Usage.TotalTokens != 18 || a.Usage().TotalTokens != 18 {
		t.Errorf("cycle %+v usage %+v", cyc, a.Usage())
	}
	msgs := a.Messages()
	checkPairing(t, msgs)
	if len(msgs) != 6 {
		t.Fatalf("conversation:\n%s", dump(msgs))
	}
	if msgs[2].Content != "echo:hi" || !strings.Contains(msgs[3].Content, `unknown tool "nope"`) ||
		!strings.Contains(msgs[4].Content, "do not parse") {
		t.Errorf("tool answers:\n%s", dump(msgs))
	}
	got := ev.kinds(EventToolCall)
	if len(got) != 3 || got[0].IsError || !got[1].IsError || !got[2].IsError || got[0].Args != `{"text":"hi"}` {
		t.Errorf("tool_call events %+v", got)
	}
	if n := len(ev.kinds(EventTurn)); n != 2 {
		t.Errorf("%d turn events", n)
	}
	if defs := m.requests()[0].Tools; len(defs) != 1 || defs[0].Function.Name != "echo" {
		t.Errorf("tool definitions %+v", defs)
	}
}

// barrier lets n calls through only once all n have arrived.
type barrier struct {
	mu      sync.Mutex
	arrived int
	n       int
	all     chan struct{}
}

func (b *barrier) wait(ctx context.Context) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true
	case <-ctx.Done():
		return false
	}
}

func TestParallelCallsOverlap(t *testing.T) {
	b := &barrier{n: 2, all: make(chan struct{})}
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	meet := funcTool{name: "meet", parallel: true, run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		if !b.wait(ctx) {
			return tools.Errorf("the other parallel call never arrived"), nil
		}
		note("meet")
		return tools.Text("met"), nil
	}}
	solo := funcTool{name: "solo", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		note("solo")
		return tools.Text("alone"), nil
	}}
	m := &fakeModel{t: t, steps: []step{
		calls(tc{"a", "meet", `{}`}, tc{"b", "meet", `{}`}, tc{"c", "solo", `{}`}),
		final("ok"),
	}}
	a := newAgent(t, AgentConfig{Model: m}, meet, solo)
	_ = a.Say(t.Context(), "go")
	// Without concurrency the first meet call waits for the second forever; the timeout turns that into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.RunCycle(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if msgs[2].Content != "met" || msgs[3].Content != "met" || msgs[4].Content != "alone" {
		t.Errorf("answers:\n%s", dump(msgs))
	}
	if fmt.Sprint(order) != "[meet meet solo]" {
		t.Errorf("order %v: the sequential call must wait for the parallel group", order)
	}
}

func TestInboxTakenBeforeEachTurnAndCommittedAfterRecording(t *testing.T) {
	dir := t.TempDir()
	session := filepath.Join(dir, "sessions", "alice.jsonl")
	in := &fakeInbox{sessionPath: session}
	first := msg("m1", "lead", "please build it")
	first.Type, first.CorrelationID, first.TaskID = "message", "req-1", "t-9"
	in.push(first)
	in.batches[0].Bad = append(in.batches[0].Bad, inboxBad())
	m := &fakeModel{t: t, steps: []step{
		func(req llm.Request) (llm.Response, error) {
			in.push(msg("m2", "bob", "also this")) // arrives while alice works
			return calls(tc{"c1", "echo", `{"text":"x"}`})(req)
		},
		final("built"),
	}}
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: m, Inbox: in, SessionPath: session, OnEvent: ev.add}, echo("echo", false))
	cyc, err := a.RunCycle(context.Background())
	if err != nil || cyc.Final != "built" {
		t.Fatalf("cycle %+v err %v", cyc, err)
	}
	reqs := m.requests()
	want1 := "<message from=\"lead\" type=\"message\" id=\"m1\" correlation_id=\"req-1\" task_id=\"t-9\">\nplease build it\n</message>"
	if got := reqs[0].Messages[1].Content; got != want1 || len(reqs[0].Messages) != 2 {
		t.Errorf("first turn saw %q", got)
	}
	second := reqs[1].Messages
	if last := second[len(second)-1]; last.Role != "user" || !strings.Contains(last.Content, `id="m2"`) ||
		second[len(second)-2].Role != "tool" {
		t.Errorf("second turn:\n%s", dump(second))
	}
	if len(in.commitErrs) != 0 {
		t.Errorf("committed before the session held %v", in.commitErrs)
	}
	if fmt.Sprint(in.log) != "[read commit read commit]" {
		t.Errorf("inbox calls %v", in.log)
	}
	if bad := ev.kinds(EventBadLine); len(bad) != 1 || !strings.Contains(bad[0].Err, "not json") {
		t.Errorf("bad_line events %+v", bad)
	}
	if got := ev.kinds(EventInbox); len(got) != 2 || got[0].MessageIDs[0] != "m1" || got[1].MessageIDs[0] != "m2" {
		t.Errorf("inbox events %+v", got)
	}
	for _, m := range a.Messages() {
		if strings.Contains(m.Content, "{broken") {
			t.Error("a bad line reached the conversation")
		}
	}
}

func TestRedeliveredMessageIsTakenOnce(t *testing.T) {
	in := &fakeInbox{redeliver: true} // commit never advances: at-least-once at its worst
	in.push(msg("m1", "lead", "hello"))
	m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "echo", `{}`}), calls(tc{"c2", "echo", `{}`}), final("ok")}}
	a := newAgent(t, AgentConfig{Model: m, Inbox: in}, echo("echo", false))
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, msg := range a.Messages() {
		n += strings.Count(msg.Content, `id="m1"`)
	}
	if n != 1 {
		t.Errorf("m1 appears %d times:\n%s", n, dump(a.Messages()))
	}
	// Nothing new after the final reply: the model is not called again.
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("second cycle err = %v, want ErrNothingToDo", err)
	}
	if len(m.requests()) != 3 {
		t.Errorf("%d model calls", len(m.requests()))
	}
}

// A commit held by an unfinished commit elsewhere (a store across hosts
// that lost a node mid-commit) is no failure of the agent: the message is
// in its conversation, comes again, is dropped by id, and that read's
// commit moves the position.
func TestAHeldCommitIsReadAgainNotAFailure(t *testing.T) {
	in := &fakeInbox{held: 1}
	in.push(msg("m1", "lead", "hello"))
	m := &fakeModel{t: t, steps: []step{final("ok"), final("again")}}
	a := newAgent(t, AgentConfig{Model: m, Inbox: in})
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatalf("a held commit failed the cycle: %v", err)
	}
	// m1 comes again: dropped by id, committed, and nothing new to do.
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("second cycle err = %v, want ErrNothingToDo", err)
	}
	n := 0
	for _, msg := range a.Messages() {
		n += strings.Count(msg.Content, `id="m1"`)
	}
	if n != 1 {
		t.Errorf("m1 appears %d times:\n%s", n, dump(a.Messages()))
	}
	if b, _ := in.ReadUnread(t.Context(), "alice"); !b.Empty() {
		t.Errorf("m1 is still unread after the second read's commit")
	}
}

func TestNothingToDoWithoutMessages(t *testing.T) {
	m := &fakeModel{t: t}
	a := newAgent(t, AgentConfig{Model: m, Inbox: &fakeInbox{}})
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("err = %v", err)
	}
	if len(m.requests()) != 0 {
		t.Error("the model was called")
	}
}

func TestTurnLimit(t *testing.T) {
	m := &fakeModel{t: t, steps: []step{calls(tc{"", "echo", `{}`})}}
	m.steps[0] = func(req llm.Request) (llm.Response, error) { // a fresh id per turn
		return calls(tc{fmt.Sprintf("c%d", len(req.Messages)), "echo", `{}`})(req)
	}
	a := newAgent(t, AgentConfig{Model: m, MaxTurns: 3}, echo("echo", false))
	_ = a.Say(t.Context(), "loop forever")
	cyc, err := a.RunCycle(context.Background())
	if !errors.Is(err, ErrTurnLimit) || cyc.Final != "stopped after 3 turns" || cyc.Turns != 3 {
		t.Errorf("cycle %+v err %v", cyc, err)
	}
	checkPairing(t, a.Messages())
}

func TestCancelMidToolLeavesValidConversation(t *testing.T) {
	for _, parallelTools := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallelTools), func(t *testing.T) {
			started := make(chan struct{}, 4)
			block := funcTool{name: "block", parallel: parallelTools, run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				started <- struct{}{}
				<-ctx.Done()
				return tools.Errorf("stopped: %v", ctx.Err()), nil
			}}
			m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "block", `{}`}, tc{"c2", "block", `{}`}, tc{"c3", "echo", `{}`})}}
			a := newAgent(t, AgentConfig{Model: m}, block, echo("echo", false))
			_ = a.Say(t.Context(), "go")
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-started
				cancel()
			}()
			_, err := a.RunCycle(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			msgs := a.Messages()
			checkPairing(t, msgs)
			if len(msgs) != 5 || msgs[4].Content != cancelledResult || !strings.Contains(msgs[2].Content, "stopped") {
				t.Errorf("conversation:\n%s", dump(msgs))
			}
		})
	}
}

func TestModelErrorIsReturned(t *testing.T) {
	boom := errors.New("server on fire")
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: &fakeModel{t: t, steps: []step{fail(boom)}}, OnEvent: ev.add})
	_ = a.Say(t.Context(), "hi")
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if e := ev.kinds(EventError); len(e) != 1 || e[0].Err != boom.Error() {
		t.Errorf("error events %+v", e)
	}
}

func TestRunCycleIsNotReentrant(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	hold := funcTool{name: "hold", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		close(entered)
		<-release
		return tools.Text("held"), nil
	}}
	m := &fakeModel{t: t, steps: []step{calls(tc{"c1", "hold", `{}`}), final("ok")}}
	a := newAgent(t, AgentConfig{Model: m}, hold)
	_ = a.Say(t.Context(), "go")
	done := make(chan error, 1)
	go func() { _, err := a.RunCycle(context.Background()); done <- err }()
	<-entered
	if _, err := a.RunCycle(context.Background()); !errors.Is(err, ErrCycleRunning) {
		t.Errorf("second RunCycle err = %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Messages and Usage are read while a cycle writes; -race fails without the lock.
func TestReadsDuringCycle(t *testing.T) {
	var steps []step
	for i := range 20 {
		steps = append(steps, calls(tc{fmt.Sprintf("c%d", i), "wait", `{}`}))
	}
	m := &fakeModel{t: t, steps: append(steps, final("ok"))}
	firstRead := make(chan struct{})
	wait := funcTool{name: "wait", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		<-firstRead // the cycle goes on only once the reader is reading
		return tools.Text("ok"), nil
	}}
	a := newAgent(t, AgentConfig{Model: m}, wait)
	_ = a.Say(t.Context(), "go")
	stop := make(chan struct{})
	readerDone := make(chan int)
	go func() {
		reads := 0
		for {
			_ = a.Messages()
			_ = a.Usage()
			if reads++; reads == 1 {
				close(firstRead)
			}
			select {
			case <-stop:
				readerDone <- reads
				return
			default:
			}
		}
	}()
	_, err := a.RunCycle(context.Background())
	close(stop)
	if reads := <-readerDone; reads == 0 || err != nil {
		t.Errorf("reads %d err %v", reads, err)
	}
	if got := len(a.Messages()); got != 1+20*2+1 {
		t.Errorf("%d messages", got)
	}
}

func TestSayDuringCycleWaitsForTurnBoundary(t *testing.T) {
	var a *Agent
	interrupt := funcTool{name: "slow", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		if err := a.Say(t.Context(), "person: also do X"); err != nil { // typed while tools run
			return tools.Result{}, err
		}
		return tools.Text("slow done"), nil
	}}
	m := &fakeModel{t: t, steps: []step{
		calls(tc{"c1", "slow", `{}`}, tc{"c2", "slow", `{}`}),
		func(req llm.Request) (llm.Response, error) {
			_ = a.Say(t.Context(), "person: one more thing") // typed during the last model call
			return final("done")(req)
		},
		final("did the one more thing"),
	}}
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	a = newAgent(t, AgentConfig{Model: m, SessionPath: path}, interrupt)
	_ = a.Say(t.Context(), "go")
	if _, err := a.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := m.requests()[1].Messages[1:]
	checkPairing(t, second)
	if n := len(second); second[n-1].Content != "person: also do X" || second[n-2].Content != "person: also do X" {
		t.Errorf("second turn:\n%s", dump(second))
	}
	msgs := a.Messages()
	if last := msgs[len(msgs)-1]; last.Content != "person: one more thing" {
		t.Errorf("late message lost:\n%s", dump(msgs))
	}
	cyc, err := a.RunCycle(context.Background())
	if err != nil || cyc.Final != "did the one more thing" {
		t.Errorf("next cycle %+v err %v", cyc, err)
	}
	restored := newAgent(t, AgentConfig{Model: m, SessionPath: path})
	if !reflect.DeepEqual(restored.Messages(), a.Messages()) {
		t.Errorf("session differs from memory:\n%s", dump(restored.Messages()))
	}
}

func TestEmptyReplyIsRecordedAsAValidMessage(t *testing.T) {
	m := &fakeModel{t: t, steps: []step{final("")}}
	a := newAgent(t, AgentConfig{Model: m})
	if err := a.Say(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	c, err := a.RunCycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if last := msgs[len(msgs)-1]; last.Content == "" || c.Final != last.Content {
		t.Fatalf("an empty reply was recorded empty: %+v (final %q)", last, c.Final)
	}
}
