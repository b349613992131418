package team

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// memQueue is a work queue in memory: what a worker takes and how it
// answers for each request.
type memQueue struct {
	jobs chan *memJob
	mu   sync.Mutex
	done map[string]string // request data → "ack", "nak" or "term"
}

type memJob struct {
	q    *memQueue
	data []byte
}

func (q *memQueue) Publish(_ context.Context, _ string, data []byte) error {
	q.jobs <- &memJob{q: q, data: data}
	return nil
}

func (q *memQueue) Next(ctx context.Context) (hosts.QueueJob, error) {
	select {
	case j := <-q.jobs:
		return j, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (j *memJob) answer(how string) error {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	j.q.done[string(j.data)] = how
	return nil
}

func (j *memJob) Data() []byte              { return j.data }
func (j *memJob) Delivered() int            { return 1 }
func (j *memJob) Ack(context.Context) error { return j.answer("ack") }
func (j *memJob) Nak(time.Duration) error   { return j.answer("nak") }
func (j *memJob) Term() error               { return j.answer("term") }
func (q *memQueue) answered(data string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.done[data]
}

// A spawn request comes off the wire: one that is not JSON, names a path
// for a teammate, or claims a teammate the registry does not wait for is
// dropped with an event or left alone; none starts a teammate or calls a
// model, and the worker goes on taking requests.
func TestAWorkerRefusesHostileSpawnRequests(t *testing.T) {
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} })
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := &memQueue{jobs: make(chan *memJob, 8), done: map[string]string{}}
	var mu sync.Mutex
	var events []event.Event
	tm, err := OpenWorker(context.Background(), Options{
		Workspace: ws,
		Model:     llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake"}),
		Queue:     q,
		OnEvent: func(e event.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close(context.Background())
	future := time.Now().Add(time.Hour)
	forged, _ := json.Marshal(hosts.Request{ID: "spawn-x", Name: "mallory", Role: "spy", From: "lead", Deadline: future})
	hostile := []string{
		`{not json`,
		string(mustJSON(t, hosts.Request{ID: "spawn-1", Name: "../etc", Role: "x", From: "lead", Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "spawn-2", Name: "eve", Role: "x", From: "lead", Isolation: "chroot", Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "spawn-3", Name: "eve", Role: "x", From: "lead", Labels: []string{"a b"}, Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "", Name: "eve", Role: "x", From: "lead", Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "spawn-4", Name: "eve", Role: "x", From: "lead", Isolation: worktree.IsolationWorktree, Base: "--upload-pack=touch /tmp/x", Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "spawn-5", Name: "eve", Role: "x", From: "lead", Isolation: worktree.IsolationWorktree, Base: "main", Deadline: future})),
		string(mustJSON(t, hosts.Request{ID: "spawn-6", Name: "eve", Role: "x", From: "lead", Deny: []string{"not a rule ("}, Deadline: future})),
	}
	for _, data := range append(hostile, string(forged)) {
		if err := q.Publish(context.Background(), "", []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.EventuallyF(t, 30*time.Second, "the worker's answer to every request", func() bool {
		for _, data := range append(hostile, string(forged)) {
			if q.answered(data) == "" {
				return false
			}
		}
		return true
	}, func() string { q.mu.Lock(); defer q.mu.Unlock(); return fmt.Sprintf("answered: %v", q.done) })
	for _, data := range hostile {
		if how := q.answered(data); how != "term" {
			t.Errorf("%s was %s, want dropped (term)", data, how)
		}
	}
	// The forged request names nobody the registry waits for: taken off
	// the queue, and nothing runs.
	if how := q.answered(string(forged)); how != "ack" {
		t.Errorf("the forged request was %s, want acknowledged and ignored", how)
	}
	if tm.roster.runs("mallory") || len(srv.Requests("mallory")) > 0 {
		t.Error("a forged request started mallory")
	}
	mu.Lock()
	defer mu.Unlock()
	dropped := 0
	for _, e := range events {
		if strings.Contains(e.Sentence(), "a spawn request on the work queue was dropped") {
			dropped++
		}
	}
	if dropped != len(hostile) {
		t.Errorf("%d events say a request was dropped, want %d", dropped, len(hostile))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
