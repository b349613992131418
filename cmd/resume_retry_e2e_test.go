package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// TestResumedTeammatesRetryWhileTheTeamOpens: with --resume, teammates start
// inside team.Open, so a model call they retry (429) can report its retry
// before run has the team. Each resumed teammate's first request is answered
// 429: every retry must reach events.jsonl, and the race-built binary must
// not see the retry callback race the team's assignment.
func TestResumedTeammatesRetryWhileTheTeamOpens(t *testing.T) {
	ws := t.TempDir()
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	// Enough teammates that the first ones call the model while Open still
	// brings back the others (each reads the lead's inbox and its own).
	const mates = 12
	var names []string
	first := map[string][]fakellm.Reply{}
	for i := 0; i < mates; i++ {
		name := fmt.Sprintf("mate%02d", i)
		names = append(names, name)
		// Settled by an earlier run: not ended, so --resume brings it back.
		registerTeammate(t, ws, name, registry.StatusShutdown)
		if _, err := store.Append(t.Context(), name, inbox.Message{Type: inbox.TypeMessage, From: "user", Content: "one more thing, " + name}); err != nil {
			t.Fatal(err)
		}
		first[name] = []fakellm.Reply{{Status: 429, Content: "slow down", RetryAfter: "1"}}
	}
	// Old, read messages in the lead's inbox make each teammate's reopening slower.
	for i := 0; i < 300; i++ {
		if _, err := store.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeResult, From: names[i%mates], Content: fmt.Sprintf("earlier result %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := store.ReadUnread(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(t.Context(), "lead", b); err != nil {
		t.Fatal(err)
	}

	srv := fakellm.New(fakellm.Queue(first, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "lead: noted"}
		}
		return fakellm.Reply{Content: c.Agent + ": done"}
	}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()

	// --quiet: the progress printer takes no lock, so nothing orders the
	// callback after the assignment by accident and the race detector sees it.
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--resume", "--quiet", "--max-workers", fmt.Sprint(mates), "carry on")
	if r.code != 0 {
		t.Fatalf("run --resume: exit %d\n%s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	retried := retryEvents(t, ws)
	for _, name := range names {
		if n := srv.CallsFor(name); n < 2 {
			t.Errorf("%s made %d model calls, want the 429 and its retry", name, n)
		}
		if retried[name] == 0 {
			t.Errorf("%s's retry is not in events.jsonl", name)
		}
	}
}

// retryEvents counts the retry events per agent in the workspace's events.jsonl.
func retryEvents(t *testing.T, ws string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(ws, ".agentteam", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("events.jsonl: %v: %s", err, sc.Bytes())
		}
		if e.Kind() == event.EventRetry {
			n[e.Agent]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
