package gitwt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// A program git runs that leaves a child behind holding git's output (the
// person's filter here, the repository's being neutralised) cannot keep a
// git call, and so agentteam, alive: the call ends at its deadline, or
// soon after git itself, and the whole process group is killed.
func TestALeftBehindChildIsKilledWithGit(t *testing.T) {
	testkit.SkipShort(t)
	cases := []struct {
		name, after string // what the filter does after starting `sleep 60 &` (on stderr)
		deadline    time.Duration
	}{
		{name: "git blocks past the deadline", after: "sleep 60", deadline: time.Second},
		{name: "git ends but the child holds its output", after: "cat", deadline: time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostileEnv(t)
			dir, r := newRepo(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			slow := filepath.Join(t.TempDir(), "slow")
			write(t, slow, "#!/bin/sh\nsleep 60 >/dev/null &\necho $! > '"+pidFile+"'\n"+c.after+"\n")
			if err := os.Chmod(slow, 0o755); err != nil {
				t.Fatal(err)
			}
			global := filepath.Join(t.TempDir(), "gitconfig")
			write(t, global, "[filter \"slow\"]\n\tclean = "+slow+"\n")
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=slow\n")
			w, err := r.Add(context.Background(), filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(w.Path, "eve.txt"), "x\n")

			ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
			defer cancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() { _, err := w.CommitAll(ctx, "eve"); done <- err }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("CommitAll still runs 15 s on: the filter's child keeps it alive")
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("CommitAll took %v", took)
			}
			data, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the filter did not run: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 5*time.Second, fmt.Sprintf("the filter's child %d to end with git", pid),
				func() bool { return !alive(pid) })
		})
	}
}

// alive reports whether pid is a process that has not ended (a zombie
// waiting for its parent has).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(data), ") ")
	return ok && !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
