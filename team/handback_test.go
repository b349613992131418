package team

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

// fakeBeats are heartbeats whose loss the test decides; every worker is
// always seen alive, as a lease lost to a slow renewal can be by the lead
// (its entry renewed late, never expired).
type fakeBeats struct {
	mu    sync.Mutex
	held  *fakeBeat
	holds int
}

type fakeBeat struct {
	lost chan struct{}
	once sync.Once
}

func (b *fakeBeat) Lost() <-chan struct{}                              { return b.lost }
func (b *fakeBeat) Err() error                                         { return errors.New("renewal too late") }
func (b *fakeBeat) Release(context.Context) error                      { b.once.Do(func() { close(b.lost) }); return nil }
func (fb *fakeBeats) Alive(context.Context) (map[string][]byte, error) { return nil, nil }

func (fb *fakeBeats) Hold(context.Context, string, []byte) (Heartbeat, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.held = &fakeBeat{lost: make(chan struct{})}
	fb.holds++
	return fb.held, nil
}

func (fb *fakeBeats) Watch(ctx context.Context) (<-chan WorkerChange, <-chan struct{}, error) {
	ch, cur := make(chan WorkerChange), make(chan struct{})
	close(cur)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, cur, nil
}

// lose ends the held heartbeat as a renewal that came too late does.
func (fb *fakeBeats) lose() {
	fb.mu.Lock()
	b := fb.held
	fb.mu.Unlock()
	b.once.Do(func() { close(b.lost) })
}

func (fb *fakeBeats) count() int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.holds
}

// A worker whose heartbeat was lost stops its teammates (fenced); the
// lead respawns them only once it sees that heartbeat gone. A lease lost
// to a renewal answered late comes back before anyone sees it gone: the
// worker then puts its fenced teammate back on the queue itself, so it is
// not left working on no worker (the failover test's hang); it goes on
// from its conversation, and the lead hears of it once.
func TestAWorkerThatTakesItsHeartbeatBackHandsBackWhatItFenced(t *testing.T) {
	release := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" && c.N == 0 {
			select { // her first call: still out when her worker is fenced
			case <-release:
			case <-time.After(time.Minute):
			}
			return fakellm.Reply{Content: "LATE"}
		}
		return fakellm.Reply{Content: c.Agent + ": parser written"}
	})
	defer srv.Close()
	defer close(release)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := &memQueue{jobs: make(chan *memJob, 8), done: map[string]string{}}
	beats := &fakeBeats{}
	tm, err := OpenWorker(context.Background(), Options{
		Workspace:  ws,
		Model:      loop.NewClient(loop.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake"}),
		Queue:      q,
		Heartbeats: beats,
		Sessions:   natsSessions(t, natsURL(t), "handback"),
		Worker:     WorkerOptions{ID: "w1", Host: "h1", Beat: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	now := time.Now().UTC()
	if _, err := tm.reg.Update(func(c *Config) error {
		c.Teammates = append(c.Teammates, Member{Name: "alice", Role: "programmer", Status: StatusQueued, CreatedAt: now, UpdatedAt: now, SpawnID: "spawn-alice-1"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.messenger.deliver(workspace.LeadName, "alice", inbox.TypeMessage, "write the parser"); err != nil {
		t.Fatal(err)
	}
	first := mustJSON(t, SpawnRequest{ID: "spawn-alice-1", Name: "alice", Role: "programmer", From: workspace.LeadName, Deadline: now.Add(time.Hour)})
	if err := q.Publish(context.Background(), "spawn-alice-1", first); err != nil {
		t.Fatal(err)
	}
	alice := func() Member {
		c, err := tm.reg.Read()
		if err != nil {
			t.Fatal(err)
		}
		if i := c.Find("alice"); i >= 0 {
			return c.Teammates[i]
		}
		return Member{}
	}
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened: alice is %+v", what, alice())
			}
		}
	}
	waitUntil("alice working on w1", func() bool {
		m := alice()
		return m.Status == StatusWorking && m.Worker == "w1" && len(srv.Requests("alice")) == 1
	})
	beats.lose()
	waitUntil("alice respawned and done", func() bool {
		m := alice()
		return m.Status == StatusIdle && m.SpawnID != "spawn-alice-1" && len(srv.Requests("alice")) == 2
	})
	if n := beats.count(); n != 2 {
		t.Errorf("the worker held its heartbeat %d times, want 2 (taken back once)", n)
	}
	m := alice()
	if m.Worker != "w1" || !strings.Contains(m.Error, "lost its heartbeat") {
		t.Errorf("alice after her respawn: worker %q, error %q; want w1 and why", m.Worker, m.Error)
	}
	var resumed SpawnRequest
	if err := json.Unmarshal([]byte(q.lastData()), &resumed); err != nil || !resumed.Resume || resumed.ID != m.SpawnID {
		t.Errorf("the request put back: %+v (%v); want alice's, resumed, with her new spawn id %s", resumed, err, m.SpawnID)
	}
	// She went on from her conversation: the prompt is in her second call.
	reqs := srv.Requests("alice")
	var prompt bool
	for _, msg := range reqs[1].Messages {
		prompt = prompt || strings.Contains(msg.Content, "write the parser")
	}
	if !prompt {
		t.Error("alice's second call does not hold her conversation's prompt")
	}
	msgs, _, err := tm.store.ReadAll(workspace.LeadName)
	if err != nil {
		t.Fatal(err)
	}
	var news, results int
	for _, msg := range msgs {
		switch {
		case msg.Type == inbox.TypeError && strings.Contains(msg.Content, "lost its heartbeat"):
			news++
		case strings.Contains(msg.Content, "LATE"):
			t.Errorf("the fenced call's late answer reached the lead: %q", msg.Content)
		case strings.Contains(msg.Content, "parser written"):
			results++
		}
	}
	if news != 1 || results != 1 {
		t.Errorf("the lead heard %d times of alice's respawn and got %d results, want 1 and 1", news, results)
	}
}

// lastData is the last request published on q.
func (q *memQueue) lastData() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}
