package team

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// TestResumedTeamKeepsAnOpenPlanRequest: a plan submitted before the process
// stopped can still be approved by its id after a resume.
func TestResumedTeamKeepsAnOpenPlanRequest(t *testing.T) {
	srv := fakellm.New(planScript)
	defer srv.Close()
	dir := t.TempDir()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	open := func(resume bool) (*Team, *statusWatcher) {
		w := newStatusWatcher()
		tm, err := Open(context.Background(), Options{Workspace: ws, Resume: resume, OnEvent: w.on, PollInterval: 50 * time.Millisecond,
			Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})})
		if err != nil {
			t.Fatal(err)
		}
		return tm, w
	}
	first, w := open(false)
	if err := first.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", string(registry.StatusIdle))
	id := pendingPlan(t, first)
	first.Abort("stopped")
	first.Close(context.Background())

	second, w2 := open(true)
	defer second.Close(context.Background())
	if got, ok := second.Protocols().OpenPlanRequest("alice"); !ok || got != id {
		t.Fatalf("after resume the open plan request is %q (%v), want %q", got, ok, id)
	}
	if _, err := second.Protocols().ReviewPlan(context.Background(), "lead", id, true, "go"); err != nil {
		t.Fatalf("approving the plan submitted before the stop: %v", err)
	}
	w2.wait(t, "alice", "plan approved")
	testkit.Eventually(t, 20*time.Second, "the resumed alice's out.txt after approval", func() bool {
		data, err := os.ReadFile(filepath.Join(dir, "out.txt"))
		return err == nil && string(data) == "done"
	})
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}
