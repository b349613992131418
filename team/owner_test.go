package team

import (
	"context"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

func TestOneProcessRunsATeamAtATime(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "hi"}))
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws, Model: loop.NewClient(loop.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})}
	first, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "already running the team") {
		t.Fatalf("second Open: %v, want a refusal naming the running team", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
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
			Model: loop.NewClient(loop.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})})
		if err != nil {
			t.Fatal(err)
		}
		defer tm.Close()
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
