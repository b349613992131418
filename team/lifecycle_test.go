package team

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Environment of the child process that appends one message to an inbox
// (see TestMain), as `agentteam send` from another terminal would.
const (
	envAppendDir     = "AGENTTEAM_TEST_APPEND_DIR"
	envAppendTo      = "AGENTTEAM_TEST_APPEND_TO"
	envAppendContent = "AGENTTEAM_TEST_APPEND_CONTENT"
)

// appendFromEnv is the child process's whole job.
func appendFromEnv() error {
	to := os.Getenv(envAppendTo)
	ctx := context.Background() // a child process of a test: nothing cancels it
	_, err := inbox.NewStore(os.Getenv(envAppendDir)).Append(ctx, to, inbox.Message{
		Type: inbox.TypeMessage, From: inbox.UserName, To: to, Content: os.Getenv(envAppendContent)})
	return err
}

// eventWaiter collects a team's events so a test can wait for one.
type eventWaiter struct {
	mu      sync.Mutex
	events  []event.Event
	changed chan struct{} // coalesced: a new event arrived
}

func newEventWaiter() *eventWaiter {
	return &eventWaiter{changed: make(chan struct{}, 1)}
}

// add is the team's OnEvent; it never blocks.
func (w *eventWaiter) add(e event.Event) {
	w.mu.Lock()
	w.events = append(w.events, e)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// waitFor returns once an event satisfies pred, failing the test after timeout.
func (w *eventWaiter) waitFor(t *testing.T, what string, timeout time.Duration, pred func(event.Event) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	next := 0
	for {
		w.mu.Lock()
		fresh := w.events[next:]
		next = len(w.events)
		w.mu.Unlock()
		for _, e := range fresh {
			if pred(e) {
				return
			}
		}
		select {
		case <-w.changed:
		case <-deadline.C:
			t.Fatalf("no %s within %s", what, timeout)
		}
	}
}

// openIdleTeam opens a team whose only backstop poll is a minute away, so a
// teammate woken within seconds was woken by fsnotify.
func openIdleTeam(t *testing.T, srv *fakellm.Server) (*Team, *eventWaiter) {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake", Stream: true})
	w := newEventWaiter()
	tm, err := Open(context.Background(), Options{Workspace: ws, Model: model, MaxWorkers: 2,
		PollInterval: time.Minute, OnEvent: w.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Close(context.Background()) })
	return tm, w
}

// waitIdleAfterCycles waits until alice is idle with n cycles in the registry.
func waitIdleAfterCycles(t *testing.T, tm *Team, w *eventWaiter, name string, n int, timeout time.Duration) {
	t.Helper()
	w.waitFor(t, fmt.Sprintf("%s idle after %d cycles", name, n), timeout, func(e event.Event) bool {
		if st, ok := e.Payload.(event.StatusChanged); !ok || e.Agent != name || st.Status != registry.StatusIdle {
			return false
		}
		cfg, err := tm.Registry().Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		i := cfg.Find(name)
		return i >= 0 && cfg.Teammates[i].Cycles == n && cfg.Teammates[i].Status == registry.StatusIdle
	})
}

// echoScript: each teammate answers with the last message it was given.
func echoScript() fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		return fakellm.Reply{Content: fmt.Sprintf("%s cycle reply %d: %s", c.Agent, c.N, msgs[len(msgs)-1].Content)}
	}
}

// assertWokeOn checks alice's second model request carried content.
func assertWokeOn(t *testing.T, srv *fakellm.Server, content string) {
	t.Helper()
	reqs := srv.Requests("alice")
	if len(reqs) != 2 {
		t.Fatalf("alice made %d model calls, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(last.Content, content) || !strings.Contains(last.Content, `from="user"`) {
		t.Fatalf("alice's second call ends with %q, want the message %q from user", last.Content, content)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

// TestIdleTeammateWakesOnAppendByAnotherStore: a message appended through a
// different inbox.Store (no in-process wake) reaches an idle teammate.
func TestIdleTeammateWakesOnAppendByAnotherStore(t *testing.T) {
	srv := fakellm.New(echoScript())
	defer srv.Close()
	tm, w := openIdleTeam(t, srv)
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "get ready"}); err != nil {
		t.Fatal(err)
	}
	waitIdleAfterCycles(t, tm, w, "alice", 1, 10*time.Second)

	other := inbox.NewStore(tm.Workspace().InboxDir())
	if _, err := other.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: inbox.UserName, Content: "wake up from another store"}); err != nil {
		t.Fatal(err)
	}
	waitIdleAfterCycles(t, tm, w, "alice", 2, 10*time.Second)
	assertWokeOn(t, srv, "wake up from another store")
}

// TestIdleTeammateWakesOnAppendByAnotherProcess: the same, with the message
// appended by a child process.
func TestIdleTeammateWakesOnAppendByAnotherProcess(t *testing.T) {
	srv := fakellm.New(echoScript())
	defer srv.Close()
	tm, w := openIdleTeam(t, srv)
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "get ready"}); err != nil {
		t.Fatal(err)
	}
	waitIdleAfterCycles(t, tm, w, "alice", 1, 10*time.Second)

	const content = "wake up from another process"
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), envAppendDir+"="+tm.Workspace().InboxDir(), envAppendTo+"=alice", envAppendContent+"="+content)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("the appending process: %v: %s", err, out)
	}
	waitIdleAfterCycles(t, tm, w, "alice", 2, 10*time.Second)
	assertWokeOn(t, srv, content)
}
