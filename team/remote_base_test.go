package team

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testgit"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// teamRemote is a bare repository as the team's git remote and two clones
// of it, the lead's host's and a worker's; the lead then commits lead.txt,
// which the worker's clone (and the remote) lack.
func teamRemote(t *testing.T) (bare string, lead, worker *workspace.Workspace, leadHead string) {
	t.Helper()
	src := testgit.Workspace(t)
	bare = filepath.Join(t.TempDir(), "team.git")
	testgit.Git(t, filepath.Dir(bare), "clone", "--quiet", "--bare", src.Root, bare)
	lead, worker = cloneWorkspace(t, bare), cloneWorkspace(t, bare)
	if err := os.WriteFile(filepath.Join(lead.Root, "lead.txt"), []byte("the lead's newer work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, lead.Root, "add", "lead.txt")
	testgit.Git(t, lead.Root, "commit", "--quiet", "-m", "lead's work since the worker cloned")
	return bare, lead, worker, strings.TrimSpace(testgit.Git(t, lead.Root, "rev-parse", "HEAD"))
}

// runQueued runs one spawn request on a worker's team in ws (its own
// stores, as a worker's on files would be; isolation its default), the
// registry waiting for it as the lead's spawn leaves it, and returns
// the teammate's result to the lead, its registry entry and its branch's
// start (its merge base with base), read before the team's end removes a
// branch without changes.
func runQueued(t *testing.T, ws *workspace.Workspace, isolation string, req hosts.Request, base string) (string, registry.Member, string) {
	t.Helper()
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} })
	defer srv.Close()
	return runQueuedOn(t, ws, srv, req, base, func(o *Options) { o.Isolation = isolation })
}

// runQueuedOn is runQueued with the teammate's model srv and the worker's
// options changed by with.
func runQueuedOn(t *testing.T, ws *workspace.Workspace, srv *fakellm.Server, req hosts.Request, base string, with func(*Options)) (string, registry.Member, string) {
	t.Helper()
	reg := registry.NewRegistry(ws.RegistryPath(), "")
	now := time.Now().UTC()
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: req.Name, Role: req.Role, Status: registry.StatusQueued, CreatedAt: now, SpawnID: req.ID})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	store := inbox.NewStore(ws.InboxDir())
	if _, err := store.Append(t.Context(), req.Name, inbox.Message{Type: inbox.TypeMessage, From: "lead", To: req.Name, Content: "work"}); err != nil {
		t.Fatal(err)
	}
	q := &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}}
	opts := Options{
		Workspace: ws,
		Model:     llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake"}),
		Queue:     q,
		Worker:    hosts.Options{GitRemote: "origin"},
	}
	with(&opts)
	tm, err := OpenWorker(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close(context.Background())
	req.From, req.Deadline = "lead", now.Add(time.Hour)
	if err := q.Publish(context.Background(), req.ID, mustJSON(t, req)); err != nil {
		t.Fatal(err)
	}
	var report inbox.Message
	testkit.Eventually(t, time.Minute, req.Name+"'s report to the lead", func() bool {
		msgs, _, err := store.ReadAll(t.Context(), "lead")
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		i := slices.IndexFunc(msgs, func(m inbox.Message) bool {
			return m.From == req.Name && (m.Type == inbox.TypeResult || m.Type == inbox.TypeError)
		})
		if i >= 0 {
			report = msgs[i]
		}
		return i >= 0
	})
	c, err := reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("git", "-C", ws.Root, "merge-base", worktree.BranchPrefix+req.Name, base).Output()
	from := strings.TrimSpace(string(out)) // "" when it has no branch or lacks base
	return report.Content, c.Teammates[c.Find(req.Name)], from
}

// TestAWorkerStartsATeammateFromTheLeadsCommit: the lead's commit, which
// neither the worker's clone nor the remote's branches hold, is pushed by
// the lead under refs/agentteam/base/NAME and fetched by the worker, whose
// teammate's worktree holds the lead's newer file. A worker started with
// --isolation worktree puts the teammate in a worktree even when the
// request says none (the stricter wins). Fails without the base (no
// lead.txt) and without the stricter rule (no worktree).
func TestAWorkerStartsATeammateFromTheLeadsCommit(t *testing.T) {
	bare, lead, worker, head := teamRemote(t)
	leadW := worktree.New(lead, registry.NewRegistry(lead.RegistryPath(), ""), nil)
	leadW.ShareBasesTo("origin", "")
	base, err := leadW.ShareBase(context.Background(), "carol", true)
	if err != nil || base != head {
		t.Fatalf("ShareBase = %q, %v; want the lead's HEAD %s", base, err, head)
	}
	if onRemote := strings.TrimSpace(testgit.Git(t, bare, "rev-parse", "refs/agentteam/base/carol")); onRemote != head {
		t.Fatalf("the remote's refs/agentteam/base/carol is %s, want %s", onRemote, head)
	}

	res, m, from := runQueued(t, worker, worktree.IsolationWorktree, hosts.Request{ID: "spawn-carol-1", Name: "carol", Role: "programmer",
		Isolation: worktree.IsolationNone, Base: base}, base)
	if m.Isolation != worktree.IsolationWorktree || m.Branch != "agentteam/carol" {
		t.Fatalf("carol is not in a worktree on a worker started with --isolation worktree: %+v\n%s", m, res)
	}
	if m.BaseNote != "" || strings.Contains(res, "Note:") {
		t.Fatalf("carol's base is noted as not the lead's: %q\n%s", m.BaseNote, res)
	}
	if _, err := os.Stat(filepath.Join(worker.Root, m.Worktree, "lead.txt")); err != nil {
		t.Fatalf("carol's worktree lacks the lead's newer file: %v", err)
	}
	if from != head {
		t.Fatalf("carol's branch does not start from the lead's commit %s (merge base %s)", head, from)
	}

	// Once the remote's branches hold the lead's commit, nothing is pushed.
	testgit.Git(t, lead.Root, "push", "--quiet", "origin", "main")
	if base, err := leadW.ShareBase(context.Background(), "dave", true); err != nil || base != head {
		t.Fatalf("ShareBase = %q, %v", base, err)
	}
	if refs := testgit.Git(t, bare, "for-each-ref", "refs/agentteam/base/dave"); refs != "" {
		t.Fatalf("a base was pushed that the remote's main holds already: %s", refs)
	}
}

// TestAWorkerThatCannotFetchTheLeadsCommitSaysWhy: a commit the remote
// does not have (the lead's push failed, or never came) leaves the
// teammate on the worker's HEAD, and its registry entry and its result
// say why in one sentence. Fails without the fallback (the spawn fails).
func TestAWorkerThatCannotFetchTheLeadsCommitSaysWhy(t *testing.T) {
	_, _, worker, head := teamRemote(t) // the lead's commit is on no remote
	workerHead := strings.TrimSpace(testgit.Git(t, worker.Root, "rev-parse", "HEAD"))
	res, m, from := runQueued(t, worker, "", hosts.Request{ID: "spawn-erin-1", Name: "erin", Role: "programmer",
		Isolation: worktree.IsolationWorktree, Base: head}, "HEAD")
	if m.Status == registry.StatusFailed || m.Isolation != worktree.IsolationWorktree {
		t.Fatalf("erin did not start in a worktree: %+v\n%s", m, res)
	}
	want := "its worktree does not start from the lead's commit " + head[:12] + " but from this worker's clone, which may be behind: " +
		"the fetch from the git remote origin failed (the remote has no such commit)"
	if m.BaseNote != want {
		t.Fatalf("erin's registry entry says %q\nwant %q", m.BaseNote, want)
	}
	if !strings.Contains(res, "Note: "+want+".") {
		t.Fatalf("erin's result does not say why:\n%s", res)
	}
	if from != workerHead {
		t.Fatalf("erin's branch does not start from the worker's HEAD %s (merge base %s)", workerHead, from)
	}
}

// TestAMergedBranchIsDeletedFromTheRemoteAndARespawnStartsAfresh: the
// lead's merge of carol's pushed branch deletes it (and the ref of her
// base) from the team's remote; carol spawned again on the worker, whose
// clone still has her old merged branch, starts from the lead's commit
// that holds the merge, not from her old branch. Fails without the delete
// (the branch stays on the remote) and without the fresh start (the old
// branch lacks the lead's newer file).
func TestAMergedBranchIsDeletedFromTheRemoteAndARespawnStartsAfresh(t *testing.T) {
	ctx := context.Background()
	bare, lead, worker, _ := teamRemote(t)
	reg := registry.NewRegistry(filepath.Join(t.TempDir(), "config.json"), "") // the team's, shared
	now := time.Now().UTC()
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = []registry.Member{{Name: "carol", Role: "programmer", Status: registry.StatusWorking, CreatedAt: now, Worker: "w", Host: "w"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	leadW := worktree.New(lead, reg, nil)
	leadW.ShareBasesTo("origin", "")
	base, err := leadW.ShareBase(ctx, "carol", true)
	if err != nil {
		t.Fatal(err)
	}
	wW := worktree.New(worker, reg, nil)
	wW.PushTo("origin", "")
	p, _, _, err := wW.Ensure(ctx, "carol", worktree.Start{Base: base, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	wW.Record(ctx, "carol", func(m *registry.Member) {
		m.Isolation, m.Worktree, m.Branch = worktree.IsolationWorktree, p.Rel, p.WT.Branch
	})
	if err := os.WriteFile(filepath.Join(p.Root, "carol.txt"), []byte("carol\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := wW.Report(ctx, "carol"); !strings.Contains(rep, "Pushed to the team's git remote origin") {
		t.Fatalf("carol's report: %s", rep)
	}
	if err := reg.Change(t.Context(), func(c *registry.Config) error { c.Teammates[0].Status = registry.StatusIdle; return nil }); err != nil {
		t.Fatal(err)
	}
	mr, err := leadW.Merge(ctx, "carol", nil)
	if err != nil || mr.Stat == "" {
		t.Fatalf("the lead's merge: %+v, %v", mr, err)
	}
	if !strings.Contains(mr.Text(), "agentteam/carol was deleted from the git remote origin.") {
		t.Fatalf("the merge does not say the remote's branch went: %s", mr.Text())
	}
	if refs := testgit.Git(t, bare, "for-each-ref", "refs/heads/agentteam/", "refs/agentteam/"); refs != "" {
		t.Fatalf("the remote keeps carol's merged branch or her base:\n%s", refs)
	}

	// The lead goes on from the merge and spawns carol again: her new
	// worktree on the worker (which still has her old worktree and branch,
	// merged) starts from the lead's commit.
	if err := os.WriteFile(filepath.Join(lead.Root, "later.txt"), []byte("later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, lead.Root, "add", "later.txt")
	testgit.Git(t, lead.Root, "commit", "--quiet", "-m", "later")
	base2, err := leadW.ShareBase(ctx, "carol", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates[0] = registry.Member{Name: "carol", Role: "programmer", Status: registry.StatusQueued, CreatedAt: now, Worker: "w", Host: "w"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p2, _, note, err := wW.Ensure(ctx, "carol", worktree.Start{Base: base2, Fresh: true})
	if err != nil || note != "" {
		t.Fatalf("carol's second worktree: %v, %q", err, note)
	}
	if got := strings.TrimSpace(testgit.Git(t, worker.Root, "rev-parse", "agentteam/carol")); got != base2 {
		t.Fatalf("carol's branch is at %s, not at the lead's commit %s", got, base2)
	}
	if _, err := os.Stat(filepath.Join(p2.Root, "later.txt")); err != nil {
		t.Fatalf("carol's worktree lacks the lead's later file: %v", err)
	}

	// The same, when the worker's clone kept her branch but not her worktree.
	testgit.Git(t, worker.Root, "worktree", "remove", "--force", p2.WT.Path)
	testgit.Git(t, worker.Root, "update-ref", "refs/heads/agentteam/carol", base)
	if _, _, _, err := wW.Ensure(ctx, "carol", worktree.Start{Base: base2, Fresh: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(testgit.Git(t, worker.Root, "rev-parse", "agentteam/carol")); got != base2 {
		t.Fatalf("carol's kept branch is at %s, not moved up to the lead's commit %s", got, base2)
	}
}
