// Package testgit makes the git repositories tests run in: a workspace
// that is a repository with one commit, and git run in it. Only tests
// import it.
package testgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/workspace"
)

// Workspace is a workspace that is a git repository with one commit.
func Workspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main"}, {"config", "user.name", "T"}, {"config", "user.email", "t@example.com"},
	} {
		Git(t, ws.Root, args...)
	}
	if err := os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, ws.Root, "add", "-A")
	Git(t, ws.Root, "commit", "--quiet", "-m", "start")
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	return ws
}

// Git runs git in dir and fails the test if it fails; it returns the output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
