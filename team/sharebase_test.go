package team

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// countGit puts a git first on PATH that counts its runs in a file and
// runs the real one; it returns how many runs so far.
func countGit(t *testing.T) func() int {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	script := "#!/bin/sh\necho x >> " + count + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "x")
	}
}

// Spawns with isolation none carry the lead's commit along for a worker
// that forces worktrees; in a workspace that is no git repository each
// ran git for nothing (a storebench profile: 14 ms of CPU a spawn). Such
// spawns now ask git again only now and then, while a spawn that needs
// the commit (isolation worktree) still asks every time, and sees a
// repository made meanwhile.
func TestSpawnsInAWorkspaceWithoutGitRunGitNowAndThen(t *testing.T) {
	runs := countGit(t)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := worktree.New(ws, registry.NewRegistry(ws.RegistryPath(), ""), nil)
	ctx := context.Background()
	for i := range 50 {
		if base, err := w.ShareBase(ctx, "alice", false); err == nil || base != "" {
			t.Fatalf("spawn %d: ShareBase in no repository = %q, %v; want an error", i, base, err)
		}
	}
	if n := runs(); n > 2 {
		t.Errorf("50 spawns in no repository ran git %d times, want at most 2", n)
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if base, err := w.ShareBase(ctx, "bob", true); err != nil || base == "" {
		t.Fatalf("a worktree spawn after git init: ShareBase = %q, %v; want the new commit", base, err)
	}
}
