package team

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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

// Changes that meet in one write are each applied once and each counted;
// one that fails stores nothing and has its own error back.
func TestBatchedUpdatesCountEveryChange(t *testing.T) {
	reg := seedRegistry(t)
	before, _ := reg.Read(t.Context())
	const writers, each = 8, 40
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if w%2 == 1 && i%4 == 0 {
					err := reg.Change(t.Context(), func(c *registry.Config) error { return errBoom })
					if !errors.Is(err, errBoom) {
						t.Errorf("a failing change returned %v", err)
					}
					continue
				}
				if err := reg.ChangeStatus(t.Context(), "alice", registry.StatusWorking, func(m *registry.Member) { m.Turns++ }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	want := writers*each - (writers/2)*(each/4)
	after, err := registry.NewRegistry(reg.Path(), "").Read(t.Context()) // as another process sees it
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Teammates[0].Turns; got != want {
		t.Errorf("turns = %d, want %d", got, want)
	}
	if got := after.Version - before.Version; got != int64(want) {
		t.Errorf("version grew by %d, want %d: one per change", got, want)
	}
}

// Changes that nobody waits for are written in order, each counted, each
// reported after it is on disk; Flush waits for all of them.
func TestSetStatusLaterKeepsOrderAndFlushes(t *testing.T) {
	reg := seedRegistry(t)
	before, _ := reg.Read(t.Context())
	const n = 100
	statuses := []registry.Status{registry.StatusQueued, registry.StatusWorking, registry.StatusIdle}
	var mu sync.Mutex
	var reported []int
	for i := range n {
		reg.SetStatusLater("alice", statuses[i%3], func(m *registry.Member) { m.Turns = i }, func(err error) {
			if err != nil {
				t.Error(err)
			}
			onDisk, rerr := registry.NewRegistry(reg.Path(), "").Read(t.Context())
			mu.Lock()
			defer mu.Unlock()
			if rerr != nil || onDisk.Teammates[0].Turns < i {
				t.Errorf("change %d reported before it was on disk (turns %d, %v)", i, onDisk.Teammates[0].Turns, rerr)
			}
			reported = append(reported, i)
		})
	}
	reg.SetStatusLater("nobody", registry.StatusIdle, nil, func(err error) {
		if err == nil {
			t.Error("a change to a missing member reported no error")
		}
	})
	reg.Flush()
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != n {
		t.Fatalf("%d of %d changes reported after Flush", len(reported), n)
	}
	for i, got := range reported {
		if got != i {
			t.Fatalf("change %d reported as number %d: out of order", got, i)
		}
	}
	after, _ := registry.NewRegistry(reg.Path(), "").Read(t.Context())
	if m := after.Teammates[0]; m.Turns != n-1 || m.Status != statuses[(n-1)%3] {
		t.Errorf("on disk: %d turns, %s; want the last change", m.Turns, m.Status)
	}
	if got := after.Version - before.Version; got != n {
		t.Errorf("version grew by %d, want %d", got, n)
	}
}

// okModel ends every cycle at once with a final reply.
type okModel struct{}

func (okModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "ok"},
		FinishReason: "stop"}, nil
}

// Whether a status change waits for its write or not, its event comes
// after the registry has it (for a reader in another process), and a team
// shut down has every status on disk when ShutdownAll returns.
func TestStatusEventsFollowTheRegistry(t *testing.T) {
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other := registry.NewRegistry(ws.RegistryPath(), "") // another process's view
	idle := make(chan string, 16)
	var mu sync.Mutex
	var stale []string
	onEvent := func(e event.Event) {
		st, ok := e.Payload.(event.StatusChanged)
		if !ok {
			return
		}
		c, err := other.Read(t.Context())
		i := c.Find(e.Agent)
		mu.Lock()
		if err != nil || i < 0 || c.Teammates[i].Status != st.Status {
			stale = append(stale, fmt.Sprintf("%s %s (registry: %v %v)", e.Agent, st.Status, c.Teammates, err))
		}
		mu.Unlock()
		if st.Status == registry.StatusIdle {
			idle <- e.Agent
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tm, err := Open(ctx, Options{Workspace: ws, Model: okModel{}, MaxWorkers: 2, MaxQueue: 10, OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close(context.Background())
	names := []string{"alice", "bob", "carol"}
	for _, n := range names {
		if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: n, Role: "worker", Prompt: "start"}); err != nil {
			t.Fatal(err)
		}
	}
	for range names {
		select {
		case <-idle:
		case <-ctx.Done():
			t.Fatal("teammates did not become idle")
		}
	}
	tm.ShutdownAll("test over")
	c, err := other.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Teammates {
		if m.Status != registry.StatusShutdown || m.Turns != 1 {
			t.Errorf("%s: %s with %d turns on disk after ShutdownAll", m.Name, m.Status, m.Turns)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range stale {
		t.Errorf("status event before the registry had it: %s", s)
	}
	if filepath.Dir(other.Path()) != ws.TeamDir() {
		t.Fatalf("registry at %s", other.Path())
	}
}
