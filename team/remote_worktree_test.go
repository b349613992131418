package team

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testgit"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// cloneWorkspace is a workspace that is a clone of bare, with an identity.
func cloneWorkspace(t *testing.T, bare string) *workspace.Workspace {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	testgit.Git(t, filepath.Dir(dir), "clone", "--quiet", bare, dir)
	testgit.Git(t, dir, "config", "user.name", "T")
	testgit.Git(t, dir, "config", "user.email", "t@example.com")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestARespawnedTeammateGoesOnFromItsPushedBranch: carol's branch, pushed
// by the worker that ran her, is where her worktree starts on the worker
// she is respawned on (her file is there, and that worker's push is a
// fast-forward); the lead's merge then fetches both commits.
func TestARespawnedTeammateGoesOnFromItsPushedBranch(t *testing.T) {
	ctx := context.Background()
	src := testgit.Workspace(t)
	bare := filepath.Join(t.TempDir(), "team.git")
	testgit.Git(t, filepath.Dir(bare), "clone", "--quiet", "--bare", src.Root, bare)
	wsA, wsB, lead := cloneWorkspace(t, bare), cloneWorkspace(t, bare), cloneWorkspace(t, bare)
	reg := registry.NewRegistry(filepath.Join(t.TempDir(), "config.json"), "") // the team's, shared
	now := time.Now().UTC()
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = []registry.Member{{Name: "carol", Role: "programmer", Status: registry.StatusWorking, CreatedAt: now, Worker: "a", Host: "a"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	work := func(ws *workspace.Workspace, file string) string {
		wts := worktree.New(ws, reg, nil)
		wts.PushTo("origin", "")
		p, _, _, err := wts.Ensure(ctx, "carol", worktree.Start{})
		if err != nil {
			t.Fatal(err)
		}
		wts.Record(ctx, "carol", func(m *registry.Member) {
			m.Isolation, m.Worktree, m.Branch = worktree.IsolationWorktree, p.Rel, p.WT.Branch
		})
		if err := os.WriteFile(filepath.Join(p.Root, file), []byte(file+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return wts.Report(ctx, "carol")
	}
	if rep := work(wsA, "first.txt"); !strings.Contains(rep, "Pushed to the team's git remote origin") {
		t.Fatalf("worker a's report: %s", rep)
	}
	// Worker a dies; carol is respawned on worker b, whose clone never had her branch.
	rep := work(wsB, "second.txt")
	if !strings.Contains(rep, "Pushed to the team's git remote origin") || !strings.Contains(rep, "2 files changed") {
		t.Fatalf("worker b's report (her branch should hold both files): %s", rep)
	}
	c, err := reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	onRemote := strings.TrimSpace(testgit.Git(t, bare, "rev-parse", "refs/heads/agentteam/carol"))
	if pushed := c.Teammates[0].PushedCommit; pushed != onRemote {
		t.Fatalf("registry's pushed commit %s, remote's %s", pushed, onRemote)
	}

	if err := reg.Change(t.Context(), func(c *registry.Config) error { c.Teammates[0].Status = registry.StatusIdle; return nil }); err != nil {
		t.Fatal(err)
	}
	mr, err := worktree.New(lead, reg, nil).Merge(ctx, "carol", nil)
	if err != nil || mr.Stat == "" {
		t.Fatalf("the lead's merge: %+v, %v", mr, err)
	}
	for _, f := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(lead.Root, f)); err != nil {
			t.Errorf("%s did not reach the lead: %v", f, err)
		}
	}
}

// A worker whose clone lacks the remote it was told to push to says so in
// the result, and records no push.
func TestAWorkerWithoutTheRemoteSaysSo(t *testing.T) {
	ctx := context.Background()
	ws := testgit.Workspace(t) // no remote at all
	reg := registry.NewRegistry(ws.RegistryPath(), "")
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = []registry.Member{{Name: "dave", Role: "programmer", Status: registry.StatusWorking, CreatedAt: time.Now().UTC()}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wts := worktree.New(ws, reg, nil)
	wts.PushTo("origin", "")
	p, _, _, err := wts.Ensure(ctx, "dave", worktree.Start{})
	if err != nil {
		t.Fatal(err)
	}
	wts.Record(ctx, "dave", func(m *registry.Member) {
		m.Isolation, m.Worktree, m.Branch = worktree.IsolationWorktree, p.Rel, p.WT.Branch
	})
	if err := os.WriteFile(filepath.Join(p.Root, "d.txt"), []byte("d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := wts.Report(ctx, "dave")
	if !strings.Contains(rep, `Its branch was not pushed: this worker's clone has no git remote "origin"`) {
		t.Fatalf("report: %s", rep)
	}
	if c, _ := reg.Read(t.Context()); c.Teammates[0].PushedCommit != "" {
		t.Fatalf("a push is recorded: %+v", c.Teammates[0])
	}
}
