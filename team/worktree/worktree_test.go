package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testgit"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// Merge refuses what it cannot do cleanly, each with its sentence, and
// changes nothing then.
func TestMergeRefusals(t *testing.T) {
	ws := testgit.Workspace(t)
	ctx := context.Background()
	reg := registry.NewRegistry(ws.RegistryPath(), "")
	wts := New(ws, reg, nil)
	p, _, _, err := wts.Ensure(ctx, "alice", Start{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates,
			registry.Member{Name: "alice", Status: registry.StatusIdle, CreatedAt: now, Isolation: IsolationWorktree, Worktree: p.Rel, Branch: p.WT.Branch},
			registry.Member{Name: "bob", Status: registry.StatusIdle, CreatedAt: now.Add(time.Second)},
			registry.Member{Name: "carol", Status: registry.StatusWorking, CreatedAt: now.Add(2 * time.Second), Isolation: IsolationWorktree, Branch: "agentteam/carol"},
			// An edited registry pointing at a person's branch.
			registry.Member{Name: "eve", Status: registry.StatusIdle, CreatedAt: now.Add(3 * time.Second), Isolation: IsolationWorktree, Branch: "keep-me"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Root, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("lead's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, ws.Root, "branch", "keep-me")
	head := testgit.Git(t, ws.Root, "rev-parse", "HEAD")
	for _, tc := range []struct{ name, says string }{
		{"alice", "main has uncommitted changes in a.txt: commit them first"},
		{"bob", "bob works in the shared workspace (isolation none)"},
		{"carol", "carol is working: merge its branch once it has reported"},
		{"dave", "no teammate named dave"},
		{"eve", `the registry names "keep-me" as eve's branch, not agentteam/eve`},
		{"../x", "may only contain"},
	} {
		if _, err := wts.Merge(ctx, tc.name, nil); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Merge(%s) = %v, want %q", tc.name, err, tc.says)
		}
	}
	if testgit.Git(t, ws.Root, "rev-parse", "HEAD") != head {
		t.Fatal("a refused merge moved HEAD")
	}
	if got := testgit.Git(t, ws.Root, "status", "--porcelain"); got != " M a.txt\n" {
		t.Fatalf("the lead's tree changed: %q", got)
	}

	// Committed, the lead's tree is clean: alice's report commits her file
	// and the merge brings it.
	testgit.Git(t, ws.Root, "commit", "--quiet", "-am", "lead")
	if rep := wts.Report(ctx, "alice"); !strings.Contains(rep, "Branch agentteam/alice (worktree .agentteam/worktrees/alice): 1 file changed, 1 insertion(+) against main") {
		t.Fatalf("Report = %q", rep)
	}
	rep, err := wts.Merge(ctx, "alice", nil)
	if err != nil || rep.Text() != "Merged agentteam/alice into main: 1 file changed, 1 insertion(+)." {
		t.Fatalf("Merge(alice) = %q, %v", rep.Text(), err)
	}
	wts.Cleanup(ctx)
	if _, err := os.Stat(p.WT.Path); !os.IsNotExist(err) {
		t.Fatalf("the merged worktree is left: %v", err)
	}
	if testgit.Git(t, ws.Root, "branch", "--list", "keep-me") == "" {
		t.Fatal("cleanup deleted a merged branch the registry named for eve")
	}
	c, _ := reg.Read(t.Context())
	if m := c.Teammates[c.Find("alice")]; m.Worktree != "" || !m.Merged {
		t.Fatalf("alice's entry after cleanup: %+v", m)
	}
}

// A teammate's tools get its worktree as their root: its files there, the
// state directory inside refused, the lead's files out of reach.
func TestAWorktreeIsTheTeammatesWorkspace(t *testing.T) {
	ws := testgit.Workspace(t)
	p, _, _, err := New(ws, registry.NewRegistry(ws.RegistryPath(), ""), nil).Ensure(context.Background(), "alice", Start{})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := workspace.Open(p.Root)
	if err != nil {
		t.Fatal(err)
	}
	if abs, err := wt.Resolve("a.txt"); err != nil || abs != filepath.Join(p.Root, "a.txt") {
		t.Fatalf("Resolve(a.txt) = %s, %v", abs, err)
	}
	if abs, err := wt.Resolve(".agentteam/inbox/lead.jsonl"); err != nil || !wt.IsState(abs) {
		t.Fatalf(".agentteam inside the worktree is not state: %s, %v", abs, err)
	}
	// Links in the worktree to the lead's files, by either kind of target.
	for link, to := range map[string]string{"lead-abs": filepath.Join(ws.Root, "a.txt"), "lead-rel": "../../../a.txt"} {
		if err := os.Symlink(to, filepath.Join(p.Root, link)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(p.Root, link)); err != nil {
			t.Fatalf("%s leads nowhere: %v", link, err)
		}
	}
	for _, out := range []string{"../../inbox/lead.jsonl", filepath.Join(ws.Root, "a.txt"), "../bob/a.txt", "lead-abs", "lead-rel"} {
		if abs, err := wt.Resolve(out); err == nil {
			t.Errorf("Resolve(%s) = %s, want a refusal", out, abs)
		}
	}
	if st := testgit.Git(t, ws.Root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the worktree shows in the lead's git status:\n%s", st)
	}
}

// A workspace in a repository's subdirectory: the teammate works in the
// same subdirectory of its worktree, and the lead's status stays clean.
func TestAWorkspaceInASubdirectoryOfTheRepository(t *testing.T) {
	top := testgit.Workspace(t)
	sub := filepath.Join(top.Root, "svc")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "s.txt"), []byte("s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, top.Root, "add", "-A")
	testgit.Git(t, top.Root, "commit", "--quiet", "-m", "svc")
	ws, err := workspace.Open(sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	p, _, _, err := New(ws, registry.NewRegistry(ws.RegistryPath(), ""), nil).Ensure(context.Background(), "alice", Start{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != filepath.Join(sub, ".agentteam", "worktrees", "alice", "svc") || p.Rel != filepath.Join(".agentteam", "worktrees", "alice") {
		t.Fatalf("placed %+v", p)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "s.txt")); err != nil {
		t.Fatalf("the teammate's root lacks the workspace's files: %v", err)
	}
	if st := testgit.Git(t, top.Root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status shows agentteam's files:\n%s", st)
	}
}

// Each reason a worktree cannot be made is its own sentence.
func TestWorktreeCheckSaysWhy(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	plain, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(plain.Root))
	empty, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, empty.Root, "init", "--quiet")
	for _, tc := range []struct {
		ws   *workspace.Workspace
		path string
		says string
	}{
		{plain, os.Getenv("PATH"), "isolation worktree needs a git repository: run git init, or spawn with isolation none"},
		{empty, os.Getenv("PATH"), "isolation worktree needs a commit to start from, and the repository has none yet"},
		{plain, t.TempDir(), "isolation worktree needs git, which is not installed (or not on PATH)"},
	} {
		t.Setenv("PATH", tc.path)
		if err := New(tc.ws, nil, nil).Check(context.Background()); err == nil || !strings.HasPrefix(err.Error(), tc.says) {
			t.Errorf("Check = %v, want %q", err, tc.says)
		}
	}
}
