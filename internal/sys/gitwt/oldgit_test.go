package gitwt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A git older than 2.26 has no --show-scope: every program-running value
// is then set back, the person's own too, and the repository's never runs.
func TestWithoutShowScopeEveryValueIsSetBack(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	hostileEnv(t)
	dir, r := newRepo(t)
	prog, marks := evilProgram(t)
	old := t.TempDir()
	write(t, filepath.Join(old, "git"), "#!/bin/sh\nfor a; do [ \"$a\" = --show-scope ] && { echo \"error: unknown option \\`show-scope'\" >&2; exit 129; }; done\nexec '"+real+"' \"$@\"\n")
	if err := os.Chmod(filepath.Join(old, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", old+string(os.PathListSeparator)+os.Getenv("PATH"))
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"lfs\"]\n\tclean = "+prog+" global-clean\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"ev\"]\n\tclean = "+prog+" repository-clean\n")
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "*.bin filter=lfs\n*.txt filter=ev\n")
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "data.bin"), "data\n")
	write(t, filepath.Join(w.Path, "eve.txt"), "eve\n")
	if _, err := w.CommitAll(ctx, "eve"); err != nil {
		t.Fatal(err)
	}
	noMarks(t, marks)
}

// A driver named with "=" cannot be set back with -c (git reads the key
// up to the first "="): agentteam refuses to run git there, in a sentence.
func TestADriverNameWithAnEqualsSignIsRefused(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	prog, marks := evilProgram(t)
	appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"x=y\"]\n\tclean = "+prog+" equals-clean\n")
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=x=y\n")
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err == nil {
		write(t, filepath.Join(w.Path, "eve.txt"), "eve\n")
		_, err = w.CommitAll(ctx, "eve")
	}
	if err == nil || !strings.Contains(err.Error(), `"filter.x=y.clean", which agentteam cannot switch off`) {
		t.Errorf("err = %v", err)
	}
	noMarks(t, marks)
}
