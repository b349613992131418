package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// A worker started with --isolation worktree runs alice in a worktree
// though the lead runs in its checkout (isolation none): the lead, one
// commit ahead of origin, sees from the worker's heartbeat that the spawn
// may land there and puts its commit on the remote, so alice's worktree
// has the lead's newer file; the merge then leaves nothing of hers on the
// remote. Fails without the heartbeat's isolation (the lead pushes only
// for its own worktree spawns: alice starts from the worker's older HEAD).
func TestAWorktreeWorkersTeammateStartsFromTheLeadsCommit(t *testing.T) {
	bare, lead, worker := teamClones(t)
	if err := os.WriteFile(filepath.Join(lead, "lead.txt"), []byte("the lead's newer work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, lead, "add", "lead.txt")
	gitIn(t, lead, "commit", "--quiet", "-m", "lead's work since the worker cloned")
	head := strings.TrimSpace(gitIn(t, lead, "rev-parse", "HEAD"))

	nt := startNATSTeam(t, "wtbase")
	srv := fakellm.New(remoteScript([]string{"alice"}, nil, ""), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	wid, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b", "--isolation", "worktree")
	mustSucceed(t, runBin(t, lead, env, "", "run", "--store", nt.url, "one teammate on the worker"), "run")
	noViolations(t, srv)
	aliceStartedFromTheLeadsCommit(t, nt, wid, worker, bare, head)
	m := runBin(t, lead, nil, "", "merge", "--store", nt.url, "alice")
	mustSucceed(t, m, "merge")
	if refs := gitIn(t, bare, "for-each-ref", "refs/heads/agentteam/", "refs/agentteam/"); refs != "" {
		t.Fatalf("the remote keeps alice's merged branch or her base:\n%s", refs)
	}
	if data, err := os.ReadFile(filepath.Join(lead, "alice.txt")); err != nil || string(data) != "by alice on the worker\n" {
		t.Fatalf("alice.txt in the lead's checkout: %q, %v", data, err)
	}
	stopWorker(t, waitWorker, workerPID)
}
