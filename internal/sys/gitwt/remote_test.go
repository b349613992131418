package gitwt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// remoteSetup is a bare repository as the team's remote, the worker's
// clone (with a commit on agentteam/alice) and the lead's clone.
func remoteSetup(t *testing.T) (bare string, worker, lead *Repo, commit string) {
	t.Helper()
	src, _ := newRepo(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bare = filepath.Join(base, "team.git")
	git(t, base, "clone", "--quiet", "--bare", src, bare)
	open := func(name string) *Repo {
		dir := filepath.Join(base, name)
		git(t, base, "clone", "--quiet", bare, dir)
		git(t, dir, "config", "user.name", "Tester")
		git(t, dir, "config", "user.email", "tester@example.com")
		r, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	worker, lead = open("worker"), open("lead")
	git(t, worker.Top, "checkout", "--quiet", "-b", "agentteam/alice")
	write(t, filepath.Join(worker.Top, "alice.txt"), "by alice\n")
	git(t, worker.Top, "add", "-A")
	git(t, worker.Top, "commit", "--quiet", "-m", "alice")
	git(t, worker.Top, "checkout", "--quiet", "main")
	return bare, worker, lead, strings.TrimSpace(git(t, worker.Top, "rev-parse", "agentteam/alice"))
}

// TestPushThenFetchThroughTheTeamsRemote: the worker's push of its
// branch reaches the bare remote, and the lead's fetch brings that very
// commit, which SetBranch makes the lead's own branch.
func TestPushThenFetchThroughTheTeamsRemote(t *testing.T) {
	ctx := context.Background()
	bare, worker, lead, commit := remoteSetup(t)
	got, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil)
	if err != nil || got != commit {
		t.Fatalf("Push = %q, %v; want %s", got, err, commit)
	}
	if onRemote := strings.TrimSpace(git(t, bare, "rev-parse", "refs/heads/agentteam/alice")); onRemote != commit {
		t.Fatalf("the remote's agentteam/alice is %s, want %s", onRemote, commit)
	}
	remotes, err := lead.Remotes().URLs(ctx)
	if err != nil || !SameRepoURL(remotes["origin"], bare) {
		t.Fatalf("lead's remotes = %v, %v", remotes, err)
	}
	tip, err := lead.Remotes().Fetch(ctx, "origin", "agentteam/alice", nil)
	if err != nil || tip != commit {
		t.Fatalf("Fetch = %q, %v; want %s", tip, err, commit)
	}
	if lead.BranchExists(ctx, "agentteam/alice") {
		t.Fatal("the fetch made a local branch: it goes to refs/remotes only")
	}
	if err := lead.SetBranch(ctx, "agentteam/alice", commit, ""); err != nil {
		t.Fatal(err)
	}
	if lead.BranchCommit(ctx, "agentteam/alice") != commit {
		t.Fatal("SetBranch did not make the branch")
	}
	// SetBranch with a stale old value changes nothing.
	head, _ := lead.Head(ctx)
	if err := lead.SetBranch(ctx, "agentteam/alice", head, head); err == nil || lead.BranchCommit(ctx, "agentteam/alice") != commit {
		t.Fatalf("SetBranch from a stale old value: %v", err)
	}
	if res, err := lead.Merge(ctx, "agentteam/alice", "merge alice"); err != nil || res.UpToDate {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	if read(t, filepath.Join(lead.Top, "alice.txt")) != "by alice\n" {
		t.Fatal("alice.txt did not come with the merge")
	}
}

// TestPushRefusedSaysWhyInAClause: a remote whose branch has other
// commits is not pushed over; a remote gone and a remote the clone does
// not have are each a short reason, never a forced push.
func TestPushRefusedSaysWhyInAClause(t *testing.T) {
	ctx := context.Background()
	bare, worker, lead, _ := remoteSetup(t)

	// Someone else's agentteam/alice on the remote first.
	git(t, lead.Top, "checkout", "--quiet", "-b", "agentteam/alice")
	write(t, filepath.Join(lead.Top, "other.txt"), "other\n")
	git(t, lead.Top, "add", "-A")
	git(t, lead.Top, "commit", "--quiet", "-m", "other")
	git(t, lead.Top, "push", "--quiet", "origin", "agentteam/alice")
	theirs := strings.TrimSpace(git(t, lead.Top, "rev-parse", "HEAD"))
	_, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil)
	if err == nil || !strings.Contains(err.Error(), "not a fast-forward") {
		t.Fatalf("a non-fast-forward push: %v", err)
	}
	if onRemote := strings.TrimSpace(git(t, bare, "rev-parse", "refs/heads/agentteam/alice")); onRemote != theirs {
		t.Fatal("the remote's branch was pushed over")
	}

	if _, err := worker.Remotes().Push(ctx, "nosuch", "agentteam/alice", nil); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("a push to a remote the clone lacks: %v", err)
	}
	if _, err := worker.Remotes().Push(ctx, "--upload-pack=touch pwned", "agentteam/alice", nil); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("a push to an option: %v", err)
	}

	if err := os.RemoveAll(bare); err != nil {
		t.Fatal(err)
	}
	_, err = worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil)
	if err == nil || !strings.Contains(err.Error(), "could not be reached") || strings.Count(err.Error(), "\n") > 0 {
		t.Fatalf("a push to a remote gone: %v", err)
	}
	if _, err := lead.Remotes().Fetch(ctx, "origin", "agentteam/alice", nil); err == nil {
		t.Fatal("a fetch from a remote gone succeeded")
	}
}

// TestPushAndFetchRunWithoutTheAPIKey: git's transport (here an ssh
// command that records its environment and runs the remote end itself)
// never sees the model API key's variables, nor a URL's password in
// what is said.
func TestPushAndFetchRunWithoutTheAPIKey(t *testing.T) {
	ctx := context.Background()
	bare, worker, lead, commit := remoteSetup(t)
	dump := filepath.Join(t.TempDir(), "env")
	ssh := filepath.Join(t.TempDir(), "fakessh")
	write(t, ssh, "#!/bin/sh\nfor a; do last=$a; done\nenv >> '"+dump+"'\nexec sh -c \"$last\"\n")
	if err := os.Chmod(ssh, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSH_COMMAND", ssh)
	t.Setenv("GIT_SSH_VARIANT", "simple")
	t.Setenv("OPENAI_API_KEY", "sk-openai-secret")
	t.Setenv("MY_MODEL_TOKEN", "my-model-secret")
	url := "ssh://alice@example.invalid" + bare
	git(t, worker.Top, "remote", "set-url", "origin", url)
	git(t, lead.Top, "remote", "set-url", "origin", url)
	if _, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", []string{"MY_MODEL_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	if tip, err := lead.Remotes().Fetch(ctx, "origin", "agentteam/alice", []string{"MY_MODEL_TOKEN"}); err != nil || tip != commit {
		t.Fatalf("Fetch = %q, %v", tip, err)
	}
	// The lead's base for a worker, and the deletion after a merge, too.
	leadHead, _ := lead.Head(ctx)
	if err := lead.Remotes().PushCommit(ctx, "origin", leadHead, "refs/agentteam/base/alice", []string{"MY_MODEL_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	if err := worker.Remotes().FetchCommit(ctx, "origin", leadHead, []string{"MY_MODEL_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	if err := lead.Remotes().DeleteRef(ctx, "origin", "refs/heads/agentteam/alice", commit, []string{"MY_MODEL_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	env := read(t, dump)
	if !strings.Contains(env, "GIT_SSH_VARIANT") {
		t.Fatalf("the fake ssh never ran:\n%s", env)
	}
	if strings.Contains(env, "secret") {
		t.Fatalf("git's transport got the key:\n%s", env)
	}
}

func TestRedactAndCompareURLs(t *testing.T) {
	for in, want := range map[string]string{
		"https://bob:tok3n@git.example.com/o/r.git": "https://git.example.com/o/r.git",
		"https://git.example.com/o/r":               "https://git.example.com/o/r",
		"ssh://git@host:22/o/r":                     "ssh://host:22/o/r",
		"git@host:o/r.git":                          "git@host:o/r.git",
		"/srv/git/team.git":                         "/srv/git/team.git",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	if !SameRepoURL("https://bob:x@h/o/r.git", "https://h/o/r/") || SameRepoURL("https://h/o/r", "https://h/o/s") || SameRepoURL("", "") {
		t.Error("SameRepoURL")
	}
	if msg := RedactIn("unable to access 'https://bob:tok3n@h/r'", "https://bob:tok3n@h/r"); strings.Contains(msg, "tok3n") {
		t.Errorf("RedactIn left the password: %s", msg)
	}
	for s, ok := range map[string]bool{strings.Repeat("a", 40): true, strings.Repeat("0", 64): true,
		"HEAD": false, strings.Repeat("A", 40): false, "--upload-pack=x" + strings.Repeat("a", 25): false} {
		if IsCommitID(s) != ok {
			t.Errorf("IsCommitID(%q) != %v", s, ok)
		}
	}
}

// TestTheLeadsBaseAndAMergedBranchOnTheRemote: the lead's commit that no
// remote-tracking branch holds is pushed to agentteam's own ref (never a
// branch), the worker fetches it by id (a commit the remote lacks is a
// clause), and a branch's deletion leaves one that moved on since.
func TestTheLeadsBaseAndAMergedBranchOnTheRemote(t *testing.T) {
	ctx := context.Background()
	bare, worker, lead, commit := remoteSetup(t)
	shared, _ := lead.Head(ctx)
	write(t, filepath.Join(lead.Top, "lead.txt"), "newer\n")
	git(t, lead.Top, "add", "-A")
	git(t, lead.Top, "commit", "--quiet", "-m", "newer")
	head, _ := lead.Head(ctx)
	if !lead.Remotes().Holds(ctx, "origin", shared) || lead.Remotes().Holds(ctx, "origin", head) || lead.Remotes().Holds(ctx, "--all", shared) {
		t.Fatal("Holds does not tell the commit origin/main holds from the lead's own")
	}
	if err := lead.Remotes().PushCommit(ctx, "origin", head, "refs/heads/main", nil); err == nil {
		t.Fatal("PushCommit forced a branch")
	}
	if err := lead.Remotes().PushCommit(ctx, "origin", head, "refs/agentteam/base/alice", nil); err != nil {
		t.Fatal(err)
	}
	if worker.HasCommit(ctx, head) {
		t.Fatal("the worker has the lead's commit before any fetch")
	}
	if err := worker.Remotes().FetchCommit(ctx, "origin", head, nil); err != nil || !worker.HasCommit(ctx, head) {
		t.Fatalf("FetchCommit = %v", err)
	}
	missing := strings.Repeat("1", 40)
	if err := worker.Remotes().FetchCommit(ctx, "origin", missing, nil); err == nil || err.Error() != "the remote has no such commit" {
		t.Fatalf("FetchCommit of a commit the remote lacks: %v", err)
	}
	if err := worker.Remotes().FetchCommit(ctx, "origin", "HEAD", nil); err == nil {
		t.Fatal("FetchCommit took a name for a commit id")
	}

	if _, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil); err != nil {
		t.Fatal(err)
	}
	// The branch moves on after the commit the lead merged.
	git(t, worker.Top, "checkout", "--quiet", "agentteam/alice")
	write(t, filepath.Join(worker.Top, "more.txt"), "more\n")
	git(t, worker.Top, "add", "-A")
	git(t, worker.Top, "commit", "--quiet", "-m", "more")
	newer, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lead.Remotes().DeleteRef(ctx, "origin", "refs/heads/agentteam/alice", commit, nil); err == nil || !strings.Contains(err.Error(), "moved on") {
		t.Fatalf("DeleteRef of a branch that moved on: %v", err)
	}
	if got := strings.TrimSpace(git(t, bare, "rev-parse", "refs/heads/agentteam/alice")); got != newer {
		t.Fatal("a branch that moved on was deleted")
	}
	if err := lead.Remotes().DeleteRef(ctx, "origin", "refs/heads/agentteam/alice", newer, nil); err != nil {
		t.Fatal(err)
	}
	if err := lead.Remotes().DeleteRef(ctx, "origin", "refs/heads/main", "", nil); err == nil {
		t.Fatal("DeleteRef deleted a branch without a commit to expect")
	}
	if err := lead.Remotes().DeleteRef(ctx, "origin", "refs/agentteam/base/alice", "", nil); err != nil {
		t.Fatal(err)
	}
	if refs := git(t, bare, "for-each-ref", "refs/heads/agentteam/", "refs/agentteam/"); refs != "" {
		t.Fatalf("left on the remote:\n%s", refs)
	}
}
