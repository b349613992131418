package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
)

// teamClones is a bare repository as the team's git remote, made from a
// repository with notes.txt on main, and two clones of it: the lead's
// host's and a worker's host's, each with an identity of its own.
func teamClones(t *testing.T) (bare, lead, worker string) {
	t.Helper()
	src := gitRepo(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bare = filepath.Join(base, "team.git")
	gitIn(t, base, "clone", "--quiet", "--bare", src, bare)
	clone := func(name string) string {
		dir := filepath.Join(base, name)
		gitIn(t, base, "clone", "--quiet", bare, dir)
		gitIn(t, dir, "config", "user.name", name)
		gitIn(t, dir, "config", "user.email", name+"@example.com")
		return dir
	}
	return bare, clone("lead"), clone("worker")
}

// remoteScript: the lead spawns each teammate the test names with labels
// b, so the worker labelled b runs it; each writes NAME.txt and reports.
// With every result in, the lead merges those in merge (merge_teammate),
// then ends.
func remoteScript(names, merge []string, isolation string) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent != "lead" {
			if !called(msgs, "write_file") {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
					call("write_file", `{"path":"`+c.Agent+`.txt","content":"by `+c.Agent+` on the worker\n"}`)}}
			}
			return fakellm.Reply{Content: c.Agent + ": " + c.Agent + ".txt written"}
		}
		if !called(msgs, "spawn_teammate") {
			var calls []fakellm.ToolCall
			for _, n := range names {
				calls = append(calls, call("spawn_teammate", `{"name":"`+n+`","role":"programmer","prompt":"write `+n+
					`.txt","labels":["b"]`+isolation+`}`))
			}
			return fakellm.Reply{ToolCalls: calls}
		}
		for _, n := range names {
			if lastResult(msgs, n) == "" {
				return fakellm.Reply{Content: "lead: waiting"}
			}
		}
		if len(merge) > 0 && !called(msgs, "merge_teammate") {
			var calls []fakellm.ToolCall
			for _, n := range merge {
				calls = append(calls, call("merge_teammate", `{"name":"`+n+`"}`))
			}
			return fakellm.Reply{ToolCalls: calls}
		}
		return fakellm.Reply{Content: "lead: all reported"}
	}
}

// TestATeamAcrossTwoMachinesInFiveCommands runs the README's five
// commands on 127.0.0.1, each host a clone of one bare repository: serve,
// a worker in its clone, the lead's run, diff and merge. The teammate's
// file, written on the worker, ends in the lead's checkout.
func TestATeamAcrossTwoMachinesInFiveCommands(t *testing.T) {
	bare, lead, worker := teamClones(t)
	srv := fakellm.New(remoteScript([]string{"alice"}, nil, ""), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)

	// 1. host A: agentteam serve
	s := startServe(t, t.TempDir(), nil, "--listen", "127.0.0.1:0", "--data", t.TempDir())
	store := s.url + "/app"
	nc, err := natsconn.Connect(context.Background(), s.url, serveCreds(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nt := natsTeam{url: store, nc: nc, team: "app"}
	// 2. host B, in its clone: agentteam worker --store … --labels b --isolation worktree
	wid, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", store, "--labels", "b", "--isolation", "worktree")
	// 3. host A, in its clone: agentteam run --store … "…"
	r := runBin(t, lead, env, "", "run", "--store", store, `have a teammate with labels ["b"] write alice.txt`)
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	conv := srv.Requests("lead")
	if last := conv[len(conv)-1].Messages; !contentHas(last, "Pushed to the team's git remote origin ("+bare+")") {
		t.Fatalf("alice's result does not say where her branch went:\n%s", lastResult(last, "alice"))
	}
	members := teamJSON(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + store})
	if len(members) != 1 || members[0].Worker != wid {
		t.Fatalf("alice did not run on the worker: %+v", members)
	}
	onRemote := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/heads/agentteam/alice"))
	if m := members[0]; m.PushedCommit != onRemote || m.PushRemote != "origin" || m.PushURL != bare {
		t.Fatalf("the registry says %s was pushed to %q (%q) at %q; the remote has %s", m.Name, m.PushRemote, m.PushURL, m.PushedCommit, onRemote)
	}
	if _, err := os.Stat(filepath.Join(lead, "alice.txt")); !os.IsNotExist(err) {
		t.Fatalf("alice.txt is in the lead's checkout before the merge: %v", err)
	}

	// 4. host A: agentteam diff alice
	d := runBin(t, lead, nil, "", "diff", "--store", store, "alice")
	mustSucceed(t, d, "diff")
	if !strings.Contains(d.stdout, "+++ b/alice.txt") || !strings.Contains(d.stdout, "+by alice on the worker") {
		t.Fatalf("diff alice:\n%s\n%s", d.stdout, d.stderr)
	}
	// 5. host A: agentteam merge alice
	m := runBin(t, lead, nil, "", "merge", "--store", store, "alice")
	mustSucceed(t, m, "merge")
	if !strings.Contains(m.stdout, "Merged agentteam/alice into main: 1 file changed") {
		t.Fatalf("merge alice: %q %q", m.stdout, m.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(lead, "alice.txt")); err != nil || string(data) != "by alice on the worker\n" {
		t.Fatalf("alice.txt in the lead's checkout: %q, %v", data, err)
	}
	if merges := gitIn(t, lead, "log", "--merges", "--format=%s"); !strings.Contains(merges, "merge teammate alice") {
		t.Fatalf("no merge commit (--no-ff): %q", merges)
	}
	if st := gitIn(t, lead, "status", "--porcelain"); st != "" {
		t.Fatalf("the lead's tree is not clean after the merge:\n%s", st)
	}
	stopWorker(t, waitWorker, workerPID)
}

// TestRemoteBranchesMergedByTheLeadOrRefusedToPush: the lead's
// merge_teammate fetches alice's pushed branch and merges it in its run;
// bob's push is refused (the remote has another agentteam/bob), which is
// one sentence at the end of his result, delivered all the same, and his
// merge says the branch never left the worker.
func TestRemoteBranchesMergedByTheLeadOrRefusedToPush(t *testing.T) {
	bare, lead, worker := teamClones(t)
	// Someone's agentteam/bob on the remote already: bob's push is not a fast-forward.
	other := filepath.Join(t.TempDir(), "other")
	gitIn(t, filepath.Dir(other), "clone", "--quiet", bare, other)
	gitIn(t, other, "checkout", "--quiet", "-b", "agentteam/bob")
	if err := os.WriteFile(filepath.Join(other, "other.txt"), []byte("not bob's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, other, "add", "-A")
	gitIn(t, other, "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "--quiet", "-m", "other")
	gitIn(t, other, "push", "--quiet", "origin", "agentteam/bob")
	theirs := strings.TrimSpace(gitIn(t, other, "rev-parse", "HEAD"))

	nt := startNATSTeam(t, "pushes")
	srv := fakellm.New(remoteScript([]string{"alice", "bob"}, []string{"alice", "bob"}, `,"isolation":"worktree"`), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	_, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b")
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "two teammates on the worker")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	conv := srv.Requests("lead")
	msgs := conv[len(conv)-1].Messages
	bob := lastResult(msgs, "bob")
	if !strings.Contains(bob, "bob: bob.txt written") {
		t.Fatalf("bob's result did not arrive whole:\n%s", bob)
	}
	refused := ""
	for _, line := range strings.Split(bob, "\n") {
		if strings.Contains(line, "was not pushed") {
			refused = line
		}
	}
	if !strings.Contains(refused, "Its branch was not pushed to the team's git remote origin") || !strings.Contains(refused, "not a fast-forward") {
		t.Fatalf("bob's result does not say in a sentence why his branch was not pushed:\n%s", bob)
	}
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/heads/agentteam/bob")); got != theirs {
		t.Fatalf("the remote's agentteam/bob was pushed over")
	}
	// The lead's merge_teammate: alice fetched and merged, bob refused in a sentence.
	var aliceMerge, bobMerge string
	for _, m := range msgs {
		if m.Role == "tool" && strings.Contains(m.Content, "agentteam/alice") {
			aliceMerge = m.Content
		}
		if m.Role == "tool" && strings.Contains(m.Content, "agentteam/bob") {
			bobMerge = m.Content
		}
	}
	if !strings.Contains(aliceMerge, "Merged agentteam/alice into main: 1 file changed") {
		t.Errorf("merge_teammate alice: %q", aliceMerge)
	}
	if !strings.Contains(bobMerge, "no push of it is recorded") {
		t.Errorf("merge_teammate bob: %q", bobMerge)
	}
	if data, err := os.ReadFile(filepath.Join(lead, "alice.txt")); err != nil || string(data) != "by alice on the worker\n" {
		t.Fatalf("alice.txt in the lead's checkout: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(lead, "bob.txt")); !os.IsNotExist(err) {
		t.Fatalf("bob.txt reached the lead: %v", err)
	}
	stopWorker(t, waitWorker, workerPID)
}

// TestHostileRemoteInTheRegistryIsRefused: a registry entry (a file any
// process of the team can write) naming a remote, URL, commit or branch
// of its own choosing never runs a command, fetches from outside the
// lead's own remotes, or moves a branch: merge and diff refuse in a sentence.
func TestHostileRemoteInTheRegistryIsRefused(t *testing.T) {
	_, lead, _ := teamClones(t)
	head := strings.TrimSpace(gitIn(t, lead, "rev-parse", "HEAD"))
	pwned := filepath.Join(t.TempDir(), "pwned")
	missing := strings.Repeat("1", 40)
	cases := []struct {
		name string
		m    registry.Member
		want string
	}{
		{"an option for a remote, ext:: for a URL", registry.Member{PushRemote: "--upload-pack=touch " + pwned, PushURL: "ext::sh -c touch% " + pwned, PushedCommit: missing},
			"which this repository has none of"},
		{"a URL elsewhere", registry.Member{PushRemote: "elsewhere", PushURL: "file://" + filepath.Dir(pwned), PushedCommit: missing},
			"which this repository has none of"},
		{"no commit id", registry.Member{PushRemote: "origin", PushURL: "", PushedCommit: "HEAD --upload-pack=touch " + pwned},
			"which is no commit id"},
		{"a branch the remote lacks", registry.Member{PushRemote: "origin", PushedCommit: missing},
			"could not fetch alice's branch agentteam/alice from the git remote origin"},
		{"a commit the remote's branch lacks", registry.Member{PushRemote: "origin", PushedCommit: missing, Host: "on-remote"},
			"does not hold the commit 111111111111"},
		{"another branch", registry.Member{Branch: "main", PushRemote: "origin", PushedCommit: head},
			`the registry names "main" as alice's branch`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			m.Name, m.Role, m.Status, m.Isolation, m.Worker = "alice", "programmer", registry.StatusIdle, worktree.IsolationWorktree, "w1"
			if m.Branch == "" {
				m.Branch = worktree.BranchPrefix + "alice"
			}
			if m.Host == "on-remote" {
				gitIn(t, lead, "push", "--quiet", "origin", "HEAD:refs/heads/agentteam/alice")
			}
			ownState(t, lead) // a registry of this user's that a model or a worker wrote
			reg := registry.NewRegistry(state(lead, "team", "config.json"), "")
			if err := reg.Change(t.Context(), func(c *registry.Config) error { c.Teammates = []registry.Member{m}; return nil }); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"merge", "diff"} {
				r := runBin(t, lead, nil, "", cmd, "alice")
				if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Errorf("%s alice: exit %d, stderr %q; want exit 1 and one line with %q", cmd, r.code, r.stderr, tc.want)
				}
			}
			if _, err := os.Stat(pwned); !os.IsNotExist(err) {
				t.Fatalf("a command from the registry ran: %v", err)
			}
			if got := strings.TrimSpace(gitIn(t, lead, "rev-parse", "HEAD")); got != head {
				t.Fatalf("HEAD moved to %s", got)
			}
			if br := gitIn(t, lead, "branch", "--list", "agentteam/*"); strings.TrimSpace(br) != "" {
				t.Fatalf("a branch was made: %s", br)
			}
		})
	}
}

// startWorkerIn starts the binary with args (a worker's command line) in
// dir, a clone of the team's repository, and returns once a worker's
// heartbeat is on the server (none is before) with its id.
func startWorkerIn(t *testing.T, nt natsTeam, dir string, env []string, args ...string) (id string, wait func() result, pid func() int) {
	t.Helper()
	wait, pid = startBinPID(t, dir, env, args...)
	beats, err := natsstore.OpenWorkers(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, time.Minute, "the worker's heartbeat", func() bool {
		alive, err := beats.Alive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for k := range alive {
			id = k
		}
		return len(alive) > 0
	})
	return id, wait, pid
}

// stopWorker ends a worker with SIGTERM and checks it exits cleanly.
func stopWorker(t *testing.T, wait func() result, pid func() int) {
	t.Helper()
	if err := syscall.Kill(pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if w := wait(); w.code != 0 {
		t.Fatalf("worker exit %d on SIGTERM\n%s", w.code, w.stderr)
	}
}

// lastResult is the last result message from name in a conversation.
func lastResult(msgs []openai.ChatCompletionMessage, name string) string {
	s := ""
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem {
			continue // its example is from alice
		}
		if i := strings.LastIndex(m.Content, `<message from="`+name+`" type="result"`); i >= 0 {
			s = m.Content[i:]
		}
	}
	return s
}

// TestAPushThatFailedIsRetriedWhenTheWorkerStops: the team's remote is
// gone when carol reports, which her result says in a sentence; it is
// back when the worker stops, and the worker pushes her branch then, so
// the lead's `agentteam merge` after the run brings her file.
func TestAPushThatFailedIsRetriedWhenTheWorkerStops(t *testing.T) {
	bare, lead, worker := teamClones(t)
	away := bare + ".away"
	if err := os.Rename(bare, away); err != nil {
		t.Fatal(err)
	}
	nt := startNATSTeam(t, "retry")
	srv := fakellm.New(remoteScript([]string{"carol"}, nil, `,"isolation":"worktree"`), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	_, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b")
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "one teammate on the worker")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	conv := srv.Requests("lead")
	carol := lastResult(conv[len(conv)-1].Messages, "carol")
	if !strings.Contains(carol, "carol: carol.txt written") ||
		!strings.Contains(carol, "Its branch was not pushed to the team's git remote origin ("+bare+"): the remote could not be reached") {
		t.Fatalf("carol's result:\n%s", carol)
	}
	storeEnv := []string{"AGENTTEAM_STORE=" + nt.url}
	if m := teamJSON(t, t.TempDir(), storeEnv); len(m) != 1 || m[0].PushedCommit != "" {
		t.Fatalf("a push is recorded though none was made: %+v", m)
	}

	if err := os.Rename(away, bare); err != nil {
		t.Fatal(err)
	}
	stopWorker(t, waitWorker, workerPID)
	onRemote := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/heads/agentteam/carol"))
	if m := teamJSON(t, t.TempDir(), storeEnv); len(m) != 1 || m[0].PushedCommit != onRemote {
		t.Fatalf("the push at the worker's end is not recorded (remote has %s): %+v", onRemote, m)
	}
	mr := runBin(t, lead, nil, "", "merge", "--store", nt.url, "carol")
	mustSucceed(t, mr, "merge")
	if data, err := os.ReadFile(filepath.Join(lead, "carol.txt")); err != nil || string(data) != "by carol on the worker\n" {
		t.Fatalf("carol.txt in the lead's checkout: %q, %v\n%s", data, err, mr.stdout)
	}
}

// TestALeadsWorktreeTeammateOnAWorkerStartsFromTheLeadsCommit: a lead
// started with --isolation worktree whose model spawns without saying
// gets a worktree teammate on a worker started without --isolation (the
// lead's default travels in the request), and that teammate starts from
// the lead's commit, made after the worker's clone and pushed nowhere:
// the lead pushes it under refs/agentteam/base/NAME, the worker fetches
// it. The lead's `agentteam merge` then deletes the merged branch and the
// base ref from the team's remote. Fails without each: no worktree, no
// lead.txt in it, the refs left on the remote.
func TestALeadsWorktreeTeammateOnAWorkerStartsFromTheLeadsCommit(t *testing.T) {
	bare, lead, worker := teamClones(t)
	if err := os.WriteFile(filepath.Join(lead, "lead.txt"), []byte("the lead's newer work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, lead, "add", "lead.txt")
	gitIn(t, lead, "commit", "--quiet", "-m", "lead's work since the worker cloned")
	head := strings.TrimSpace(gitIn(t, lead, "rev-parse", "HEAD"))

	nt := startNATSTeam(t, "base")
	srv := fakellm.New(remoteScript([]string{"alice"}, nil, ""), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	wid, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b")
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--isolation", "worktree", "one teammate on the worker")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	aliceStartedFromTheLeadsCommit(t, nt, wid, worker, bare, head)

	m := runBin(t, lead, nil, "", "merge", "--store", nt.url, "alice")
	mustSucceed(t, m, "merge")
	if !strings.Contains(m.stdout, "Merged agentteam/alice into main: 1 file changed") ||
		!strings.Contains(m.stdout, "agentteam/alice was deleted from the git remote origin.") {
		t.Fatalf("merge alice: %q %q", m.stdout, m.stderr)
	}
	if refs := gitIn(t, bare, "for-each-ref", "refs/heads/agentteam/", "refs/agentteam/"); refs != "" {
		t.Fatalf("the remote keeps alice's merged branch or her base:\n%s", refs)
	}
	if data, err := os.ReadFile(filepath.Join(lead, "alice.txt")); err != nil || string(data) != "by alice on the worker\n" {
		t.Fatalf("alice.txt in the lead's checkout: %q, %v", data, err)
	}
	stopWorker(t, waitWorker, workerPID)
}

// TestTheLeadPushesItsCommitToTheRemoteItIsTold: the team's git remote is
// named team in both clones (no origin at all); the lead's run and the
// worker are given --git-remote team. The lead's commit, made after the
// worker's clone, reaches the remote under refs/agentteam/base/alice and
// alice's worktree on the worker starts from it. Fails without the lead's
// --git-remote wired to the base push (pushed to origin, which the lead's
// clone lacks: alice starts from the worker's HEAD, her BaseNote says why).
func TestTheLeadPushesItsCommitToTheRemoteItIsTold(t *testing.T) {
	bare, lead, worker := teamClones(t)
	for _, dir := range []string{lead, worker} {
		gitIn(t, dir, "remote", "rename", "origin", "team")
	}
	if err := os.WriteFile(filepath.Join(lead, "lead.txt"), []byte("the lead's newer work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, lead, "add", "lead.txt")
	gitIn(t, lead, "commit", "--quiet", "-m", "lead's work since the worker cloned")
	head := strings.TrimSpace(gitIn(t, lead, "rev-parse", "HEAD"))

	nt := startNATSTeam(t, "named")
	srv := fakellm.New(remoteScript([]string{"alice"}, nil, ""), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	wid, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b", "--git-remote", "team")
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--isolation", "worktree", "--git-remote", "team", "one teammate on the worker")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	members := teamJSON(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + nt.url})
	if len(members) != 1 || members[0].Worker != wid || members[0].Isolation != worktree.IsolationWorktree {
		t.Fatalf("alice did not run in a worktree on the worker: %+v", members)
	}
	if m := members[0]; m.BaseNote != "" || m.PushRemote != "team" {
		t.Fatalf("alice did not start from the lead's commit (%q), or was pushed to %q, not team", m.BaseNote, m.PushRemote)
	}
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/agentteam/base/alice")); got != head {
		t.Fatalf("the remote's base ref for alice is %s, want the lead's HEAD %s", got, head)
	}
	if data, err := os.ReadFile(filepath.Join(worker, ".agentteam", "worktrees", "alice", "lead.txt")); err != nil || string(data) != "the lead's newer work\n" {
		t.Fatalf("alice's worktree on the worker lacks the lead's newer file: %q, %v", data, err)
	}
	stopWorker(t, waitWorker, workerPID)
}

// aliceStartedFromTheLeadsCommit checks that alice ran in a worktree on
// worker wid, started from the lead's commit head (its file lead.txt is
// there, no note says otherwise), and that the remote's base ref for her
// is that commit.
func aliceStartedFromTheLeadsCommit(t *testing.T, nt natsTeam, wid, worker, bare, head string) {
	t.Helper()
	members := teamJSON(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + nt.url})
	if len(members) != 1 || members[0].Worker != wid || members[0].Isolation != worktree.IsolationWorktree || members[0].PushedCommit == "" {
		t.Fatalf("alice did not run in a worktree on the worker, pushed: %+v", members)
	}
	if m := members[0]; m.BaseNote != "" {
		t.Fatalf("alice did not start from the lead's commit: %s", m.BaseNote)
	}
	if data, err := os.ReadFile(filepath.Join(worker, ".agentteam", "worktrees", "alice", "lead.txt")); err != nil || string(data) != "the lead's newer work\n" {
		t.Fatalf("alice's worktree on the worker lacks the lead's newer file: %q, %v", data, err)
	}
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/agentteam/base/alice")); got != head {
		t.Fatalf("the remote's base ref for alice is %s, want the lead's HEAD %s", got, head)
	}
}
