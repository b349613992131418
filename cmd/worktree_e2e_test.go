package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// gitRepo makes ws a git repository on main with notes.txt committed and
// an identity of its own (the binary runs with an empty HOME).
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "init", "--quiet", "-b", "main")
	gitIn(t, ws, "config", "user.name", "Tester")
	gitIn(t, ws, "config", "user.email", "tester@example.com")
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "--quiet", "-m", "start")
	return ws
}

// gitIn runs the real git CLI in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(cleanEnv(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// results counts the result messages from name in a conversation.
func results(msgs []openai.ChatCompletionMessage, name string) int {
	n := 0
	for _, m := range msgs {
		n += strings.Count(m.Content, `<message from="`+name+`" type="result"`)
	}
	return n
}

// mergeCalls counts the lead's merge_teammate calls for name.
func mergeCalls(msgs []openai.ChatCompletionMessage, name string) int {
	n := 0
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "merge_teammate" && strings.Contains(tc.Function.Arguments, `"`+name+`"`) {
				n++
			}
		}
	}
	return n
}

// worktreeScript: the lead spawns alice and bob, each in its own worktree;
// both change line two of notes.txt. With both results in, the lead merges
// alice (clean) then bob (conflict: aborted, main merged into bob's
// worktree with the conflict marked, bob told). Bob reads the marked file,
// writes both lines and reports, with no git of its own: agentteam commits
// its resolution when it reports; the lead merges bob again.
func worktreeScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	last := msgs[len(msgs)-1]
	tool := func(calls ...fakellm.ToolCall) fakellm.Reply { return fakellm.Reply{ToolCalls: calls} }
	switch c.Agent {
	case "alice":
		if !called(msgs, "write_file") {
			return tool(call("write_file", `{"path":"notes.txt","content":"one\nTWO by alice\nthree\n"}`))
		}
		return fakellm.Reply{Content: "alice: line two is mine"}
	case "bob":
		conflicted := contentHas(msgs, "conflicts in: notes.txt")
		switch {
		case !called(msgs, "write_file"):
			return tool(call("write_file", `{"path":"notes.txt","content":"one\nTWO by bob\nthree\n"}`))
		case !conflicted:
			return fakellm.Reply{Content: "bob: line two is mine"}
		case !called(msgs, "read_file"):
			return tool(call("read_file", `{"path":"notes.txt"}`))
		case last.Role == "tool" && strings.Contains(last.Content, "<<<<<<< "):
			return tool(call("write_file", `{"path":"notes.txt","content":"one\nTWO by alice\nTWO by bob\nthree\n"}`))
		}
		return fakellm.Reply{Content: "bob: resolved, both lines kept"}
	}
	switch {
	case !called(msgs, "spawn_teammate"):
		return tool(
			call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"put your name on line two of notes.txt","isolation":"worktree"}`),
			call("spawn_teammate", `{"name":"bob","role":"programmer","prompt":"put your name on line two of notes.txt","isolation":"worktree"}`))
	case results(msgs, "alice") >= 1 && results(msgs, "bob") >= 1 && mergeCalls(msgs, "alice") == 0:
		return tool(call("merge_teammate", `{"name":"alice"}`), call("merge_teammate", `{"name":"bob"}`))
	case results(msgs, "bob") >= 2 && mergeCalls(msgs, "bob") == 1:
		return tool(call("merge_teammate", `{"name":"bob"}`))
	case mergeCalls(msgs, "bob") == 2:
		return fakellm.Reply{Content: "lead: both merged"}
	}
	return fakellm.Reply{Content: "lead: waiting"}
}

// TestTwoTeammatesInWorktreesMergeWithAConflictResolved is the worktrees' proof
// through the binary, with the real git CLI.
func TestTwoTeammatesInWorktreesMergeWithAConflictResolved(t *testing.T) {
	ws := gitRepo(t)
	srv := fakellm.New(worktreeScript)
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "two teammates, one file")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if !strings.Contains(r.stdout, "both merged") {
		t.Fatalf("the lead did not get to merge both:\n%s\n%s", r.stdout, r.stderr)
	}

	// The lead's tree has both changes, and nothing of agentteam's state.
	data, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
	if err != nil || string(data) != "one\nTWO by alice\nTWO by bob\nthree\n" {
		t.Fatalf("notes.txt = %q, %v\n%s", data, err, r.stderr)
	}
	if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the lead's tree is not clean:\n%s", st)
	}
	if files := gitIn(t, ws, "log", "--name-only", "--format="); strings.Contains(files, ".agentteam") {
		t.Fatalf("agentteam's state was committed:\n%s", files)
	}
	// Two merge commits (--no-ff), one per teammate.
	merges := gitIn(t, ws, "log", "--merges", "--format=%s")
	if !strings.Contains(merges, "merge teammate alice") || !strings.Contains(merges, "merge teammate bob") {
		t.Fatalf("merge commits:\n%s", merges)
	}

	// The conflict was reported to the lead with its file, and sent to bob.
	lead := srv.Requests("lead")
	conv := lead[len(lead)-1].Messages
	if !contentHas(conv, "conflicts in notes.txt. The merge was aborted") {
		t.Errorf("the lead was not told of the conflict in notes.txt")
	}
	if !contentHas(conv, "Branch agentteam/alice (worktree .agentteam/worktrees/alice): 1 file changed") {
		t.Errorf("alice's result lacks its branch and diffstat")
	}
	if !contentHas(srv.Requests("bob")[len(srv.Requests("bob"))-1].Messages, "<<<<<<< ") {
		t.Errorf("bob never saw the conflict marked in notes.txt")
	}
	bob := readInbox(t, ws, "bob")
	if !hasMessage(bob, "lead", inbox.TypeMessage, "conflicts in: notes.txt") {
		t.Errorf("bob's inbox lacks the conflict: %+v", bob)
	}

	// Merged worktrees and branches are gone at shutdown, and said so.
	for _, name := range []string{"alice", "bob"} {
		if _, err := os.Stat(filepath.Join(ws, ".agentteam", "worktrees", name)); !os.IsNotExist(err) {
			t.Errorf("%s's worktree is left: %v", name, err)
		}
	}
	if br := gitIn(t, ws, "branch", "--list", "agentteam/*"); strings.TrimSpace(br) != "" {
		t.Errorf("branches left: %s", br)
	}
	if !strings.Contains(r.stderr, "removed bob's worktree and its merged branch agentteam/bob") ||
		!strings.Contains(r.stderr, "merging agentteam/bob into main conflicts in notes.txt") {
		t.Errorf("run's progress lacks the worktree lines:\n%s", r.stderr)
	}
	events := readEvents(t, state(ws, "events.jsonl"))
	if !hasEvent(events, event.EventWorktree, "bob") {
		t.Errorf("no worktree event for bob")
	}
	cfg := readRegistry(t, ws)
	if m := findMember(t, cfg, "bob"); m.Isolation != "worktree" || m.Branch != "agentteam/bob" || !m.Merged || m.Worktree != "" {
		t.Errorf("bob's registry entry: %+v", m)
	}
}

// keepScript: carol writes carol.txt in her worktree and reports; the lead
// does not merge. Resumed, carol finds her file again and adds a line.
func keepScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	last := msgs[len(msgs)-1]
	tool := func(calls ...fakellm.ToolCall) fakellm.Reply { return fakellm.Reply{ToolCalls: calls} }
	switch c.Agent {
	case "carol":
		switch {
		case contentHas(msgs, "add a line") && last.Role != "tool":
			return tool(call("read_file", `{"path":"carol.txt"}`))
		case contentHas(msgs, "add a line") && strings.Contains(last.Content, "first") && !strings.Contains(last.Content, "Wrote"):
			return tool(call("write_file", `{"path":"carol.txt","content":"first\nsecond\n"}`))
		case contentHas(msgs, "add a line"):
			return fakellm.Reply{Content: "carol: added"}
		case !called(msgs, "write_file"):
			return tool(call("write_file", `{"path":"carol.txt","content":"first\n"}`),
				call("write_file", `{"path":".agentteam/x","content":"state"}`),
				call("read_file", `{"path":"../../inbox/lead.jsonl"}`))
		}
		return fakellm.Reply{Content: "carol: wrote carol.txt"}
	}
	switch {
	case !called(msgs, "spawn_teammate"):
		return tool(call("spawn_teammate", `{"name":"carol","role":"writer","prompt":"write carol.txt"}`))
	case contentHas(msgs, "second round") && !called(msgs, "send_message"):
		return tool(call("send_message", `{"to":"carol","content":"add a line to carol.txt"}`))
	}
	return fakellm.Reply{Content: "lead: noted"}
}

// An unmerged branch is kept at shutdown and listed; --resume finds the
// worktree again; diff shows the change and merge merges it.
func TestUnmergedWorktreeIsKeptResumedDiffedAndMerged(t *testing.T) {
	ws := gitRepo(t)
	srv := fakellm.New(keepScript)
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--isolation", "worktree", "get carol.txt written")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	wt := filepath.Join(ws, ".agentteam", "worktrees", "carol")
	if _, err := os.Stat(filepath.Join(wt, "carol.txt")); err != nil {
		t.Fatalf("carol's worktree or file is gone: %v\n%s", err, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "carol.txt")); !os.IsNotExist(err) {
		t.Fatalf("carol wrote into the lead's tree: %v", err)
	}
	if !strings.Contains(r.stderr, "kept carol's unmerged branch agentteam/carol (worktree .agentteam/worktrees/carol)") {
		t.Errorf("run does not list the kept branch:\n%s", r.stderr)
	}
	// Her tools were confined to the worktree: state inside it refused, the lead's state outside it.
	conv := srv.Requests("carol")[1].Messages
	if !contentHas(conv, "holds agentteam's own state") || !contentHas(conv, "outside the workspace") {
		t.Errorf("carol's state write or escape was not refused")
	}

	tr := runBin(t, ws, nil, "", "team")
	mustSucceed(t, tr, "team")
	if !strings.Contains(tr.stdout, "agentteam/carol (unmerged: 1 file changed, 1 insertion(+))") {
		t.Errorf("team does not show the unmerged branch:\n%s\n%s\n%s", tr.stdout, gitIn(t, ws, "log", "--stat", "agentteam/carol"), r.stderr)
	}

	// Resumed, carol works in the same worktree: her file is there.
	r = runBin(t, ws, fakeEnv(srv), "", "run", "--resume", "second round")
	mustSucceed(t, r, "run --resume")
	if data, err := os.ReadFile(filepath.Join(wt, "carol.txt")); err != nil || string(data) != "first\nsecond\n" {
		t.Fatalf("carol.txt in her worktree after resume = %q, %v\n%s", data, err, r.stderr)
	}

	d := runBin(t, ws, nil, "", "diff", "carol")
	mustSucceed(t, d, "diff")
	if !strings.Contains(d.stdout, "+++ b/carol.txt") || !strings.Contains(d.stdout, "+second") {
		t.Errorf("diff carol:\n%s\n%s", d.stdout, d.stderr)
	}

	m := runBin(t, ws, nil, "", "merge", "carol", "--json")
	mustSucceed(t, m, "merge")
	var rep struct{ Branch, Into, Diffstat string }
	if err := json.Unmarshal([]byte(m.stdout), &rep); err != nil || rep.Branch != "agentteam/carol" || rep.Into != "main" {
		t.Fatalf("merge --json: %q, %v", m.stdout, err)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "carol.txt")); err != nil || string(data) != "first\nsecond\n" {
		t.Fatalf("carol.txt in the lead's tree after merge = %q, %v", data, err)
	}
	if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the lead's tree is not clean after merge:\n%s", st)
	}
}

// Without a git repository, a worktree spawn is a clear tool error, and
// --isolation worktree refuses to start.
func TestWorktreeIsolationOutsideAGitRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := t.TempDir()
	ceiling := "GIT_CEILING_DIRECTORIES=" + filepath.Dir(ws)
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"dave","role":"r","prompt":"p","isolation":"worktree"}`)}},
			{Content: "lead: no worktree here"}},
	}, nil))
	defer srv.Close()
	r := runBin(t, ws, append(fakeEnv(srv), ceiling), "", "run", "spawn dave")
	mustSucceed(t, r, "run")
	want := "isolation worktree needs a git repository: run git init, or spawn with isolation none"
	if got := lastToolResult(srv.Requests("lead")[1].Messages); !strings.Contains(got, want) {
		t.Fatalf("spawn's tool result = %q, want %q", got, want)
	}
	if cfg := readRegistry(t, ws); len(cfg.Teammates) != 0 {
		t.Fatalf("a teammate was registered: %+v", cfg.Teammates)
	}

	r = runBin(t, ws, append(fakeEnv(srv), ceiling), "", "run", "--isolation", "worktree", "anything")
	if r.code != 1 || !strings.Contains(r.stderr, "--isolation worktree: "+want) {
		t.Fatalf("run --isolation worktree outside a repository: code %d\n%s", r.code, r.stderr)
	}
	oneSentence(t, r.stderr)
	if r = runBin(t, ws, nil, "", "run", "--isolation", "sideways", "x"); r.code != 2 {
		t.Fatalf("--isolation sideways: code %d\n%s", r.code, r.stderr)
	}
}
