package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// state is a path under a workspace's .agentteam directory.
func state(ws string, elem ...string) string {
	return filepath.Join(append([]string{ws, ".agentteam"}, elem...)...)
}

// ownState makes ws's .agentteam/ this user's, for a test that writes
// state there by hand: as a first run would, or, for a copy of another
// workspace's, as the person would with agentteam adopt --yes.
func ownState(t *testing.T, ws string) {
	t.Helper()
	w, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	var fe *workspace.ForeignError
	if err = w.Init(); errors.As(err, &fe) {
		err = w.Adopt()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func readRegistry(t *testing.T, ws string) registry.Config {
	t.Helper()
	cfg, err := registry.NewRegistry(state(ws, "team", "config.json"), "").Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func findMember(t *testing.T, cfg registry.Config, name string) registry.Member {
	t.Helper()
	i := cfg.Find(name)
	if i < 0 {
		t.Fatalf("no %s in the registry: %+v", name, cfg.Teammates)
	}
	return cfg.Teammates[i]
}

func readInbox(t *testing.T, ws, name string) []inbox.Message {
	t.Helper()
	msgs, _, err := inbox.NewStore(state(ws, "inbox")).ReadAll(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func mustSucceed(t *testing.T, r result, what string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
	}
}

func noViolations(t *testing.T, srv *fakellm.Server) {
	t.Helper()
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("the model server saw protocol violations: %v", v)
	}
}

// oneSentence checks that stderr is a single "agentteam: ..." line.
func oneSentence(t *testing.T, stderr string) {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if !strings.HasPrefix(s, "agentteam: ") || strings.Contains(s, "\n") {
		t.Fatalf("want one sentence on stderr, got:\n%s", stderr)
	}
}

func TestDemoRunThroughTheBinary(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "run", "--demo", "spawn alice as programmer; spawn bob as tester; tell alice to message bob: hello")
	mustSucceed(t, r, "run --demo")
	if strings.TrimSpace(r.stdout) == "" {
		t.Fatal("the demo run printed no answer")
	}
	cfg := readRegistry(t, ws)
	if len(cfg.Teammates) != 2 {
		t.Fatalf("registry %+v, want alice and bob", cfg.Teammates)
	}
	for _, name := range []string{"alice", "bob"} {
		if m := findMember(t, cfg, name); m.Status != registry.StatusShutdown {
			t.Errorf("%s is %s after the run, want shutdown", name, m.Status)
		}
	}
	if bob := readInbox(t, ws, "bob"); !hasExact(bob, "alice", inbox.TypeMessage, "hello") {
		t.Errorf("bob's inbox lacks alice's message \"hello\": %+v", bob)
	}
	lead := readInbox(t, ws, "lead")
	for _, name := range []string{"alice", "bob"} {
		if !hasMessage(lead, name, inbox.TypeResult, "") {
			t.Errorf("the lead's inbox has no result from %s: %+v", name, lead)
		}
	}
}

// TestDemoUnderstandsEveryPhrase covers the demo's phrases not used above.
func TestDemoUnderstandsEveryPhrase(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "run", "--demo", "spawn carol as writer; send carol: hi there; broadcast: standup; list team; read inbox; dance a jig")
	mustSucceed(t, r, "run --demo")
	carol := readInbox(t, ws, "carol")
	if !hasExact(carol, "lead", inbox.TypeMessage, "hi there") || !hasExact(carol, "lead", inbox.TypeBroadcast, "standup") {
		t.Errorf("carol's inbox lacks the sent message or the broadcast: %+v", carol)
	}
	calls := map[string]wireEvent{}
	for _, e := range readEvents(t, state(ws, "events.jsonl")) {
		if e.Kind == event.EventToolCall && e.Agent == "lead" {
			if e.IsError {
				t.Errorf("the lead's %s call failed: %s", e.Tool, e.Detail)
			}
			calls[e.Tool] = e
		}
	}
	for _, tool := range []string{"spawn_teammate", "send_message", "broadcast", "list_teammates", "read_inbox"} {
		if _, ok := calls[tool]; !ok {
			t.Errorf("the demo lead never called %s (calls: %v)", tool, calls)
		}
	}
	if d := calls["list_teammates"].Detail; !strings.Contains(d, "carol") || !strings.Contains(d, "writer") {
		t.Errorf("list_teammates result does not show carol: %q", d)
	}
	// The summary of the prompt names each thing done and the phrase not understood.
	var summary string
	for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
		if m.Role == openai.ChatMessageRoleAssistant && strings.HasPrefix(m.Content, "Here is what I did") {
			summary = m.Content
		}
	}
	for _, want := range []string{"- list the team:", "carol", "- read my inbox", "broadcast to the team: done", `did not understand "dance a jig"`} {
		if !strings.Contains(summary, want) {
			t.Errorf("the lead's summary lacks %q:\n%s", want, summary)
		}
	}

	// A prompt with nothing understood gets the help, and exit 0.
	r = runBin(t, t.TempDir(), nil, "", "run", "--demo", "dance a jig")
	mustSucceed(t, r, "run --demo with an unknown phrase")
	for _, want := range []string{`did not understand "dance a jig"`, "spawn NAME as ROLE", "list team"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the reply to an unknown phrase lacks %q: %q", want, r.stdout)
		}
	}
}

func TestRunOutputModes(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		ws := t.TempDir()
		r := runBin(t, ws, nil, "", "run", "--demo", "--json", "spawn alice as programmer; send alice: hi")
		mustSucceed(t, r, "run --json")
		if r.stderr != "" {
			t.Errorf("run --json wrote to stderr:\n%s", r.stderr)
		}
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		kinds := map[string]int{}
		var last map[string]any
		for i, line := range lines {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("stdout line %d is not JSON: %q: %v", i+1, line, err)
			}
			kind, _ := v["kind"].(string)
			kinds[kind]++
			last = v
		}
		for _, k := range []event.EventKind{event.EventSpawn, event.EventStatus, event.EventMessage} {
			if kinds[string(k)] == 0 {
				t.Errorf("no %q event on stdout (kinds %v)", k, kinds)
			}
		}
		if kinds["answer"] != 1 || last["kind"] != "answer" {
			t.Fatalf("the last line is %v; want the one answer (kinds %v)", last, kinds)
		}
		if answer, _ := last["detail"].(string); answer != lastLeadReply(t, ws) {
			t.Errorf("answer %q is not the lead's last reply %q", answer, lastLeadReply(t, ws))
		}
	})
	t.Run("quiet", func(t *testing.T) {
		ws := t.TempDir()
		r := runBin(t, ws, nil, "", "run", "--demo", "--quiet", "spawn bob as tester")
		mustSucceed(t, r, "run --quiet")
		if r.stderr != "" {
			t.Errorf("run --quiet wrote to stderr:\n%s", r.stderr)
		}
		if want := lastLeadReply(t, ws) + "\n"; r.stdout != want {
			t.Errorf("run --quiet printed %q, want only the answer %q", r.stdout, want)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		ws := t.TempDir()
		r := runBin(t, ws, nil, "spawn dora as reviewer\n", "run", "--demo", "-")
		mustSucceed(t, r, "run -")
		if m := findMember(t, readRegistry(t, ws), "dora"); m.Role != "reviewer" {
			t.Errorf("dora's role is %q, want reviewer", m.Role)
		}
	})
}

func lastLeadReply(t *testing.T, ws string) string {
	t.Helper()
	msgs := readSession(t, state(ws, "sessions", "lead.jsonl"))
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleAssistant {
			return msgs[i].Content
		}
	}
	t.Fatal("the lead never replied")
	return ""
}

// slowTeamScript: the lead spawns "slow", whose model call takes delay.
func slowTeamScript(delay time.Duration) fakellm.Script {
	return fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"slow","role":"thinker","prompt":"think hard"}`)}}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "slow" {
			return fakellm.Reply{Content: "slow: done at last", Delay: delay}
		}
		return fakellm.Reply{Content: "waiting for slow"}
	})
}

func TestRunTimeoutExitsThreeAndLeavesStatusesTrue(t *testing.T) {
	srv := fakellm.New(slowTeamScript(30 * time.Second))
	defer srv.Close()
	ws := t.TempDir()
	start := time.Now()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--timeout", "2s", "think")
	// A bound on the timeout's effect, far from the 30 s the teammate would take.
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("run --timeout 2s took %s", elapsed)
	}
	if r.code != exit.Timeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exit.Timeout, r.stderr)
	}
	last := strings.TrimSpace(r.stderr)
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:] // progress lines come first
	}
	oneSentence(t, last)
	if !strings.Contains(last, "timed out after 2s") {
		t.Errorf("the error does not say the run timed out: %q", last)
	}
	noViolations(t, srv)
	cfg := readRegistry(t, ws)
	for _, m := range cfg.Teammates {
		if m.Status == registry.StatusWorking || m.Status == registry.StatusQueued {
			t.Errorf("%s is left %s after the timeout", m.Name, m.Status)
		}
	}
	slow := findMember(t, cfg, "slow")
	if slow.Status != registry.StatusFailed || !strings.Contains(slow.Error, "timed out") {
		t.Fatalf("slow is %s (%q), want failed with the timeout as reason", slow.Status, slow.Error)
	}
}

// TestTeammateOfAKilledRunIsShownFailed: a run is SIGKILLed while its
// teammate works; `team` (and a later run) show the teammate failed, naming
// the gone process, never working forever.
func TestTeammateOfAKilledRunIsShownFailed(t *testing.T) {
	srv := fakellm.New(slowTeamScript(60 * time.Second))
	defer srv.Close()
	ws := t.TempDir()
	c := startUntil(t, ws, fakeEnv(srv), []string{"slow is working"}, "run", "think")
	pid := c.Process.Pid
	if m := findMember(t, readRegistry(t, ws), "slow"); m.Status != registry.StatusWorking || m.PID != pid {
		t.Fatalf("before the kill slow is %s (pid %d), want working in pid %d", m.Status, m.PID, pid)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait() // reaped: the pid is gone
	ws2 := t.TempDir()
	copyDir(t, state(ws), state(ws2))
	ownState(t, ws2)

	// (a) `team` repairs before showing the registry.
	r := runBin(t, ws, nil, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	var shown struct{ Teammates []registry.Member }
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown.Teammates) != 1 {
		t.Fatalf("team --json: %v\n%s", err, r.stdout)
	}
	wantErr := fmt.Sprintf("pid %d", pid)
	if m := shown.Teammates[0]; m.Status != registry.StatusFailed || !strings.Contains(m.Error, wantErr) || !strings.Contains(m.Error, "gone") {
		t.Fatalf("team --json shows slow %s (%q); want failed naming the gone %s", m.Status, m.Error, wantErr)
	}
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventRepair, "slow") {
		t.Error("events.jsonl has no repair event for slow")
	}
	r = runBin(t, ws, nil, "", "team")
	if r.code != 0 || !strings.Contains(r.stdout, "failed") || !strings.Contains(r.stdout, wantErr) {
		t.Errorf("team:\n%s\n%s", r.stdout, r.stderr)
	}

	// (b) the next run repairs too, in a copy of the same state.
	srv2 := fakellm.New(fakellm.Always(fakellm.Reply{Content: "slow is gone, noted"}))
	defer srv2.Close()
	r = runBin(t, ws2, fakeEnv(srv2), "", "run", "what happened to slow?")
	mustSucceed(t, r, "the run after the kill")
	noViolations(t, srv2)
	if !strings.Contains(r.stderr, "slow: repair") {
		t.Errorf("the run's progress does not mention the repair:\n%s", r.stderr)
	}
	if m := findMember(t, readRegistry(t, ws2), "slow"); m.Status != registry.StatusFailed || !strings.Contains(m.Error, wantErr) {
		t.Fatalf("after the next run slow is %s (%q), want failed naming %s", m.Status, m.Error, wantErr)
	}
}

func TestTeamCommandCreatesNothingInAnEmptyWorkspace(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "team")
	mustSucceed(t, r, "team")
	if _, err := os.Stat(state(ws)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("`team` in an empty workspace created .agentteam (%v)", err)
	}
}

// TestCorruptInboxLineIsSetAsideNotFatal: a garbage line between two valid
// messages in the lead's inbox; the run succeeds, both messages reach the
// lead, the line is kept and reported.
func TestCorruptInboxLineIsSetAsideNotFatal(t *testing.T) {
	ws := t.TempDir()
	ownState(t, ws)
	store := inbox.NewStore(state(ws, "inbox"))
	const garbage = `{"id": "torn", "type": "mess`
	if _, err := store.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "user", Content: "first note"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(store.Path("lead"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(garbage + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "user", Content: "second note"}); err != nil {
		t.Fatal(err)
	}

	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "read both notes"}))
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "read your notes")
	mustSucceed(t, r, "run with a corrupt inbox line")
	noViolations(t, srv)
	if !strings.Contains(r.stderr, "bad_line") {
		t.Errorf("the run's progress does not report the bad line:\n%s", r.stderr)
	}
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventBadLine, "lead") {
		t.Error("events.jsonl has no bad_line event for the lead")
	}
	data, err := os.ReadFile(store.Path("lead"))
	if err != nil || !strings.Contains(string(data), garbage+"\n") {
		t.Fatalf("the garbage line is gone from the inbox file (%v):\n%s", err, data)
	}
	var session strings.Builder
	for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
		session.WriteString(m.Content + "\n")
	}
	for _, note := range []string{"first note", "second note"} {
		if !strings.Contains(session.String(), note) {
			t.Errorf("%q did not reach the lead's conversation", note)
		}
	}
	if st, _ := store.Stats(t.Context(), "lead"); st.Unread != 0 || st.Total != 2 || st.Bad != 1 {
		t.Errorf("lead inbox stats %+v, want 2 messages read and 1 set aside", st)
	}

	r = runBin(t, ws, nil, "", "inbox")
	if r.code != 0 || !strings.Contains(r.stdout, "(+1 set aside)") {
		t.Errorf("inbox does not report the line set aside:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runBin(t, ws, nil, "", "inbox", "lead")
	if r.code != 0 || !strings.Contains(r.stderr, "set aside: line at byte") || strings.Count(r.stdout, "user → lead") != 2 {
		t.Errorf("inbox lead:\n%s\n%s", r.stdout, r.stderr)
	}
}

func TestHugeMessageIsRefusedAndNothingWritten(t *testing.T) {
	ws := t.TempDir()
	huge := strings.Repeat("x", 300<<10)
	r := runBin(t, ws, nil, huge, "send", "--to", "lead", "-")
	if r.code != exit.Failure {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, exit.Failure, r.stderr)
	}
	oneSentence(t, r.stderr)
	if !strings.Contains(r.stderr, fmt.Sprint(len(huge))) || !strings.Contains(r.stderr, "limit") {
		t.Errorf("the error does not give the size and the limit: %q", r.stderr)
	}
	if fi, err := os.Stat(state(ws, "inbox", "lead.jsonl")); err == nil && fi.Size() > 0 {
		t.Errorf("a refused message wrote %d bytes to the inbox", fi.Size())
	}
	if data, err := os.ReadFile(state(ws, "events.jsonl")); err == nil && len(data) > 0 {
		t.Errorf("a refused message was logged as an event:\n%.300s", data)
	}
}

func TestSpawnNameOutsideTheWorkspaceIsAToolError(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"../x","role":"r","prompt":"escape"}`)}}},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "could not spawn ../x"} }))
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "spawn ../x")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	var toolResult string
	for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
		if m.Role == openai.ChatMessageRoleTool {
			toolResult = m.Content
		}
	}
	if !strings.HasPrefix(toolResult, "error") || !strings.Contains(toolResult, "../x") {
		t.Errorf("spawn_teammate ../x gave %q, want a tool error naming it", toolResult)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if base := d.Name(); base == "x" || strings.HasPrefix(base, "x.") {
			t.Errorf("a file for ../x exists: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := readRegistry(t, ws); len(cfg.Teammates) != 0 {
		t.Errorf("the registry holds %+v", cfg.Teammates)
	}
}

// TestRespawnAfterShutdownArchivesTheOldSession: alice, shut down by one
// run, is spawned again by the next; her old conversation is kept aside and
// the new one starts fresh.
func TestRespawnAfterShutdownArchivesTheOldSession(t *testing.T) {
	ws := t.TempDir()
	lifeScript := func(life string) fakellm.Script {
		return fakellm.Queue(map[string][]fakellm.Reply{
			"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"live"}`)}}},
		}, func(c fakellm.Call) fakellm.Reply {
			if c.Agent == "alice" {
				return fakellm.Reply{Content: life}
			}
			return fakellm.Reply{Content: "alice reported"}
		})
	}
	srv1 := fakellm.New(lifeScript("first life"))
	defer srv1.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv1), "", "run", "spawn alice"), "first run")
	if m := findMember(t, readRegistry(t, ws), "alice"); m.Status != registry.StatusShutdown {
		t.Fatalf("after the first run alice is %s, want shutdown", m.Status)
	}

	srv2 := fakellm.New(lifeScript("second life"))
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "spawn alice again"), "second run")
	noViolations(t, srv1)
	noViolations(t, srv2)

	archived, err := filepath.Glob(state(ws, "sessions", "alice.*.jsonl"))
	if err != nil || len(archived) != 1 {
		t.Fatalf("archived sessions %v (%v), want one", archived, err)
	}
	if old := sessionText(t, archived[0]); !strings.Contains(old, "first life") || strings.Contains(old, "second life") {
		t.Errorf("the archived session is not the first life:\n%s", old)
	}
	if cur := sessionText(t, state(ws, "sessions", "alice.jsonl")); !strings.Contains(cur, "second life") || strings.Contains(cur, "first life") {
		t.Errorf("the new session does not start fresh:\n%s", cur)
	}
	reqs := srv2.Requests("alice")
	if len(reqs) != 1 || len(reqs[0].Messages) != 2 {
		t.Fatalf("respawned alice's requests %+v, want one with system + prompt only", reqs)
	}
	m := findMember(t, readRegistry(t, ws), "alice")
	if m.Status != registry.StatusShutdown || m.Cycles != 1 || m.Turns != 1 {
		t.Errorf("after the second run alice is %+v, want shutdown with one fresh cycle", m)
	}
	if len(readRegistry(t, ws).Teammates) != 1 {
		t.Error("the respawn added a second alice to the registry")
	}
}

func sessionText(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	for _, m := range readSession(t, path) {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// hasExact is hasMessage with the whole content compared.
func hasExact(msgs []inbox.Message, from string, typ inbox.MessageType, content string) bool {
	for _, m := range msgs {
		if m.From == from && m.Type == typ && m.Content == content {
			return true
		}
	}
	return false
}

func hasEvent(events []wireEvent, kind event.EventKind, agent string) bool {
	for _, e := range events {
		if e.Kind == kind && e.Agent == agent {
			return true
		}
	}
	return false
}

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
