package gitwt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The person's own filter (their global config, like git-lfs's) still
// runs, and wins over the repository's filter of the same name; it never
// sees the model's key nor any other secret of agentteam's environment.
func TestThePersonsFilterRunsWithoutSecrets(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	prog, marks := evilProgram(t)
	envFile := filepath.Join(t.TempDir(), "env")
	good := filepath.Join(t.TempDir(), "good")
	write(t, good, "#!/bin/sh\nenv > '"+envFile+"'\ncat\n")
	if err := os.Chmod(good, 0o755); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"lfs\"]\n\tclean = "+good+"\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "*.bin filter=lfs\n")
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	commit := func(file string) string {
		t.Helper()
		_ = os.Remove(envFile)
		write(t, filepath.Join(w.Path, file), file+"\n")
		if _, err := r.CommitAll(ctx, w, "eve"); err != nil {
			t.Fatal(err)
		}
		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatalf("the person's filter did not run: %v", err)
		}
		return string(env)
	}
	env := commit("one.bin")
	for name, value := range secrets {
		if strings.Contains(env, value) {
			t.Errorf("the filter git ran saw %s", name)
		}
	}
	if !strings.Contains(env, "PATH=") {
		t.Errorf("the filter had no PATH:\n%s", env)
	}
	appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"lfs\"]\n\tclean = "+prog+" repository-clean\n")
	commit("two.bin")
	noMarks(t, marks)
}
