package team

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/workspace"
)

func TestOneProcessRunsATeamAtATime(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "hi"}))
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws, Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})}
	first, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "already running the team") {
		t.Fatalf("second Open: %v, want a refusal naming the running team", err)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close(context.Background())
}

func TestRunStartsAFreshLeadUnlessResumed(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "answer"}))
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(resume bool, prompt string) int {
		tm, err := Open(context.Background(), Options{Workspace: ws, Resume: resume,
			Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})})
		if err != nil {
			t.Fatal(err)
		}
		defer tm.Close(context.Background())
		if _, err := tm.Run(context.Background(), prompt); err != nil {
			t.Fatal(err)
		}
		return len(tm.Lead().Messages())
	}
	if n := run(false, "one"); n != 2 {
		t.Fatalf("first run: %d messages", n)
	}
	if n := run(false, "two"); n != 2 {
		t.Fatalf("a new run continued the old conversation: %d messages", n)
	}
	if n := run(true, "three"); n != 4 {
		t.Fatalf("a resumed run has %d messages, want the earlier 2 plus 2", n)
	}
}

// lostLock is an owner lock the test takes away.
type lostLock struct {
	lost     chan struct{}
	released chan struct{}
	once     sync.Once
}

func (l *lostLock) Acquire(context.Context) (func(), <-chan struct{}, error) {
	return func() { l.once.Do(func() { close(l.released) }) }, l.lost, nil
}

func (l *lostLock) Running(context.Context) (bool, time.Time, error) { return true, time.Time{}, nil }

// A team whose owner lock is lost while it runs (a lease not refreshed in
// time) stops: Fault and Run say so, and Close still gives the lock back.
func TestATeamStopsWhenItLosesItsOwnerLock(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "hi"}))
	defer srv.Close()
	lock := &lostLock{lost: make(chan struct{}), released: make(chan struct{})}
	tm := newTestTeam(t, srv, Options{Owner: lock})
	if tm.faults.Err() != nil {
		t.Fatalf("a fault before the lock was lost: %v", tm.faults.Err())
	}
	close(lock.lost)
	testkit.Eventually(t, 10*time.Second, "the team to stop after losing its owner lock", func() bool { return tm.faults.Err() != nil })
	if !errors.Is(tm.faults.Err(), fault.ErrOwnerLost) {
		t.Fatalf("Fault = %v, want fault.ErrOwnerLost", tm.faults.Err())
	}
	if _, err := tm.Run(context.Background(), "go on"); !errors.Is(err, fault.ErrOwnerLost) {
		t.Fatalf("Run after the loss: %v, want fault.ErrOwnerLost", err)
	}
	tm.Close(context.Background())
	select {
	case <-lock.released:
	default:
		t.Fatal("Close did not release the owner lock")
	}
}
