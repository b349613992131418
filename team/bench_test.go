package team

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// wakeModel answers every call at once with a final reply and, for the
// watched agent, hands the moment the call arrived to the benchmark.
type wakeModel struct {
	agent string
	calls chan time.Time
}

func (m *wakeModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.Agent == m.agent {
		select {
		case m.calls <- time.Now():
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	return llm.Response{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "ok"},
		FinishReason: "stop"}, nil
}

// BenchmarkTeamWakeInProcess: an idle teammate gets a message through
// Team.Send (what send_message does) and its next model call is timed.
func BenchmarkTeamWakeInProcess(b *testing.B) { benchTeamWake(b, false) }

// BenchmarkTeamWakeOtherStore: the message is appended through a second
// inbox.Store on the same directory, as `agentteam send` from another
// process does, so the wake travels through fsnotify, not the in-process signal.
func BenchmarkTeamWakeOtherStore(b *testing.B) { benchTeamWake(b, true) }

func benchTeamWake(b *testing.B, otherStore bool) {
	ws, err := workspace.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	model := &wakeModel{agent: "alice", calls: make(chan time.Time, 1)}
	idle := make(chan struct{}, 1)
	var mu sync.Mutex
	var workingAt time.Time // when alice's "working" status event was written
	onEvent := func(e event.Event) {
		st, ok := e.Payload.(event.StatusChanged)
		if !ok || e.Agent != "alice" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch st.Status {
		case registry.StatusWorking:
			workingAt = time.Now()
		case registry.StatusIdle:
			select {
			case idle <- struct{}{}:
			default:
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tm, err := Open(ctx, Options{Workspace: ws, Model: model, MaxWorkers: 2, OnEvent: onEvent})
	if err != nil {
		b.Fatal(err)
	}
	defer tm.Close(context.Background())
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "worker", Prompt: "start"}); err != nil {
		b.Fatal(err)
	}
	await(ctx, b, model.calls)
	await(ctx, b, idle)

	send := func() error { return tm.Messenger().Send(ctx, inbox.LeadName, "alice", "ping") }
	if otherStore {
		other := inbox.NewStore(ws.InboxDir())
		send = func() error {
			_, err := other.Append(ctx, "alice", inbox.Message{Type: inbox.TypeMessage, From: inbox.UserName, Content: "ping"})
			return err
		}
	}
	// lat is send to model call; the parts are send to "working" in the
	// registry and event log (a worker is free, so no "queued"), and
	// "working" to the model call (taking the inbox in: session line, read position).
	lat := make([]time.Duration, 0, b.N)
	var toWorking, toCall []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := send(); err != nil {
			b.Fatal(err)
		}
		at := await(ctx, b, model.calls)
		lat = append(lat, at.Sub(t0))
		mu.Lock()
		toWorking = append(toWorking, workingAt.Sub(t0))
		toCall = append(toCall, at.Sub(workingAt))
		mu.Unlock()
		await(ctx, b, idle) // the next message must find alice idle again
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 0.50), "p50-us")
	b.ReportMetric(percentile(lat, 0.99), "p99-us")
	b.ReportMetric(percentile(toWorking, 0.50), "working-p50-us")
	b.ReportMetric(percentile(toCall, 0.50), "call-p50-us")
}

// percentile of d in microseconds; d is sorted in place.
func percentile(d []time.Duration, p float64) float64 {
	slices.Sort(d)
	return float64(d[int(p*float64(len(d)-1))]) / float64(time.Microsecond)
}

// await receives one value or fails the benchmark when ctx ends.
func await[T any](ctx context.Context, b *testing.B, ch <-chan T) T {
	b.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		b.Fatal(fmt.Errorf("waiting for the teammate: %w", ctx.Err()))
	}
	var zero T
	return zero
}
