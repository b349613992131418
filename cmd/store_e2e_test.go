package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// storeScript: the lead puts a task on the board and spawns alice and bob,
// who each report once.
func storeScript() fakellm.Script {
	return fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"check the greeting","description":"bob checks what alice wrote"}`),
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the greeting"}`),
				call("spawn_teammate", `{"name":"bob","role":"tester","prompt":"check it"}`),
			}},
			{Content: "spawned both"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "both reported"}
		}
		return fakellm.Reply{Content: c.Agent + " finished"}
	})
}

// storeViews runs the script in a fresh workspace with storeFlag
// selecting the store (none: the files), then reads team --json, inbox
// --json and tasks --json from another directory with env selecting it
// (another process, as on another host would).
func storeViews(t *testing.T, storeFlag, env []string) (ws, elsewhere string, views map[string]string) {
	t.Helper()
	srv := fakellm.New(storeScript(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws = t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", append(append([]string{"run"}, storeFlag...), "write a greeting and check it")...)
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	// The other process: the same store, but the files of its own
	// directory. With the files, that is the workspace itself.
	elsewhere = ws
	if len(env) > 0 {
		elsewhere = t.TempDir()
	}
	views = map[string]string{}
	for _, args := range [][]string{{"team", "--json"}, {"inbox", "--json"}, {"inbox", "lead", "--json"}, {"tasks", "--json"}} {
		r := runBin(t, elsewhere, env, "", args...)
		mustSucceed(t, r, strings.Join(args, " "))
		views[strings.Join(args, " ")] = r.stdout
	}
	return ws, elsewhere, views
}

// TestRunOnJetStreamThroughTheBinary: `run --store nats://…/web` with the
// fake model spawning teammates keeps the whole state on an embedded
// JetStream server: team --json, inbox --json and tasks --json from another
// directory read it back in the shapes the files give, send from another
// process reaches the stream, and the workspace holds no inbox, registry,
// board or event file.
func TestRunOnJetStreamThroughTheBinary(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	url := s.ClientURL() + "/web"
	env := []string{"AGENTTEAM_STORE=" + url}

	ws, elsewhere, views := storeViews(t, []string{"--store", url}, env)

	var tj struct {
		TeamName  string
		Teammates []struct {
			Name   string
			Status registry.Status
			Turns  int
		}
	}
	if err := json.Unmarshal([]byte(views["team --json"]), &tj); err != nil {
		t.Fatalf("team --json: %v\n%s", err, views["team --json"])
	}
	if tj.TeamName != "web" || len(tj.Teammates) != 2 {
		t.Fatalf("team --json on the store: %s", views["team --json"])
	}
	for _, m := range tj.Teammates {
		if m.Status != registry.StatusShutdown || m.Turns == 0 {
			t.Errorf("%s: %s after %d turns; want shutdown after some", m.Name, m.Status, m.Turns)
		}
	}
	var lead []inbox.Message
	if err := json.Unmarshal([]byte(views["inbox lead --json"]), &lead); err != nil {
		t.Fatal(err)
	}
	from := map[string]int{}
	for _, m := range lead {
		if m.Type == inbox.TypeResult {
			from[m.From]++
		}
	}
	if from["alice"] != 1 || from["bob"] != 1 {
		t.Errorf("the lead's inbox on the store holds results %v, want one each from alice and bob", from)
	}
	var tasks struct{ Tasks []struct{ Subject string } }
	if err := json.Unmarshal([]byte(views["tasks --json"]), &tasks); err != nil || len(tasks.Tasks) != 1 || tasks.Tasks[0].Subject != "check the greeting" {
		t.Errorf("tasks --json on the store: %v\n%s", err, views["tasks --json"])
	}

	// The same views on the files have the same shapes, but for where each
	// teammate ran: a team on the store runs them on workers (worker.go).
	_, _, fileViews := storeViews(t, nil, nil)
	placement := func(k string) bool {
		return slices.Contains([]string{".teammates[].worker", ".teammates[].host", ".teammates[].spawnId", ".teammates[].labels"}, k)
	}
	for view, out := range views {
		if got, want := slices.DeleteFunc(jsonShape(t, out), placement), jsonShape(t, fileViews[view]); !slices.Equal(got, want) {
			t.Errorf("%s: the store's JSON has the keys\n%v\nthe files'\n%v", view, got, want)
		}
	}

	// send from another process lands in the stream.
	r := runBin(t, elsewhere, env, "", "send", "--to", "lead", "one more thing")
	mustSucceed(t, r, "send")
	id := strings.TrimSpace(r.stdout)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(context.Background(), nc, "web")
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := mb.ReadAll(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(msgs, func(m inbox.Message) bool { return m.ID == id }); i < 0 || msgs[i].Content != "one more thing" || msgs[i].From != "user" {
		t.Errorf("the message sent (%s) is not in the lead's stream inbox", id)
	}

	// The event log is the stream's: the spawns and the message sent.
	el, err := natsstore.OpenEventLog(context.Background(), nc, "web")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := el.Lines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var events []wireEvent
	for _, line := range lines {
		var e wireEvent
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		events = append(events, e)
	}
	if !hasEvent(events, event.EventSpawn, "alice") || !hasEvent(events, event.EventSpawn, "bob") {
		t.Errorf("the event stream lacks the spawns (%d events)", len(events))
	}

	// Nothing of the state is written in either directory.
	for _, dir := range []string{ws, elsewhere} {
		for _, p := range []string{"team/config.json", "tasks/board.json", "events.jsonl"} {
			if _, err := os.Stat(filepath.Join(dir, ".agentteam", p)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s was written in %s (stat: %v)", p, dir, err)
			}
		}
		if logs, _ := filepath.Glob(filepath.Join(dir, ".agentteam", "inbox", "*.jsonl")); len(logs) > 0 {
			t.Errorf("inbox files written in %s: %v", dir, logs)
		}
		// The teammates' conversations are in the session stream; only the
		// lead's is a file, where it ran.
		for _, name := range []string{"alice", "bob"} {
			if logs, _ := filepath.Glob(filepath.Join(dir, ".agentteam", "sessions", name+"*.jsonl")); len(logs) > 0 {
				t.Errorf("%s's session files written in %s: %v", name, dir, logs)
			}
		}
	}
	ss, err := natsstore.OpenSessions(context.Background(), nc, "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		lines, err := ss.Log(name).Lines(t.Context())
		if err != nil || len(lines) < 2 || !strings.Contains(string(lines[len(lines)-1]), name+" finished") {
			t.Errorf("%s's conversation in the session stream: %d lines, %v", name, len(lines), err)
		}
	}
}

// jsonShape lists every key path of a JSON document, array items merged
// under [], sorted: what a reader's code depends on, without the values.
func jsonShape(t *testing.T, doc string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				seen[prefix+"."+k] = true
				walk(prefix+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A store nobody answers at fails within seconds with one sentence, and a
// team name that is no NATS token is refused before any dial.
func TestUnreachableStoreFailsWithOneSentence(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial is refused
	url := "nats://" + addr
	start := time.Now()
	for _, args := range [][]string{{"team", "--store", url}, {"inbox", "--json"}, {"send", "--to", "lead", "hi"}} {
		r := runBin(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + url}, "", args...)
		want := fmt.Sprintf("agentteam: cannot reach the NATS server at %s", url)
		if r.code != exit.Failure || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line starting %q", args, r.code, r.stderr, exit.Failure, want)
		}
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("three refused dials took %s", d)
	}
	for _, store := range []string{"nats://" + addr + "/a.b", "nats://" + addr + "/*", "http://" + addr, "nats:///x"} {
		r := runBin(t, t.TempDir(), nil, "", "tasks", "--store", store)
		if r.code != exit.Usage || !strings.Contains(r.stderr, "--store") {
			t.Errorf("--store %s: exit %d, stderr %q; want a usage error", store, r.code, r.stderr)
		}
	}
}

// A password in the store URL is never printed.
func TestStorePasswordIsNotPrinted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, store := range []string{"nats://me:s3cret-pw@" + addr, "nats://me:s3cret-pw@" + addr + "/a.b"} {
		r := runBin(t, t.TempDir(), nil, "", "team", "--store", store)
		if r.code == 0 || strings.Contains(r.stderr+r.stdout, "s3cret-pw") {
			t.Errorf("--store %s: exit %d, printed %q", store, r.code, r.stderr)
		}
	}
}

// TestPermissionAnsweredFromAnotherDirectoryOnJetStream: a run on a NATS
// store waits on a permission ask; `requests` and `approve` run in another
// directory against the same store find it and answer it, and the waiting
// run is woken through the stream and writes the file.
func TestPermissionAnsweredFromAnotherDirectoryOnJetStream(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	store := []string{"AGENTTEAM_STORE=" + s.ClientURL() + "/asks"}
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"notes.txt","content":"hello\n"}`)}},
		fakellm.Reply{Content: "wrote the notes"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws, elsewhere := t.TempDir(), t.TempDir()

	wait := startBin(t, ws, append(fakeEnv(srv), store...), "run", "--permission-mode", "ask", "--permission-delegate", "user", "write the notes")
	a := waitForAsk(t, elsewhere, store)
	if a.Agent != "lead" || a.Tool != "write_file" || a.Path != "notes.txt" {
		t.Fatalf("the ask is %+v", a)
	}
	mustSucceed(t, runBin(t, elsewhere, store, "", "approve", a.RequestID), "approve")
	r := wait()
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(got) != "hello\n" {
		t.Fatalf("notes.txt = %q, %v after the approval", got, err)
	}
	if again := runBin(t, elsewhere, store, "", "deny", a.RequestID, "too late"); again.code == 0 {
		t.Errorf("a second answer to %s was accepted", a.RequestID)
	}
	if logs, _ := filepath.Glob(filepath.Join(ws, ".agentteam", "inbox", "*.jsonl")); len(logs) > 0 {
		t.Errorf("inbox files written beside the store: %v", logs)
	}
}

// [team] store of the user's config file selects the store for every
// command; a project file that says it is refused by run, and a broken
// project file does not stop the commands that only read the team.
func TestTheUserConfigSelectsTheStore(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	xdg := t.TempDir()
	writeConfig(t, filepath.Join(xdg, "agentteam", "config.toml"), "[team]\nstore = \"nats://"+addr+"\"\n")
	r := runBin(t, t.TempDir(), []string{"XDG_CONFIG_HOME=" + xdg}, "", "tasks")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "cannot reach the NATS server at nats://"+addr) {
		t.Errorf("tasks with the store in the user file: exit %d, stderr %q", r.code, r.stderr)
	}

	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[team]\nmax_workers = -1\n")
	mustSucceed(t, runBin(t, ws, nil, "", "tasks"), "tasks with a broken project file")

	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[team]\nstore = \"nats://"+addr+"\"\n")
	r = runBin(t, ws, []string{"OPENAI_API_KEY=k"}, "", "run", "go")
	if r.code != exit.Usage || !strings.Contains(r.stderr, "team.store is not read from a project file") {
		t.Errorf("run with the store in the project file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// ?replicas=N through the binary: a lone server cannot keep three copies,
// which is one sentence saying what to do; one copy works; a count other
// than 1, 3 or 5 is a usage error before any dial.
func TestStoreReplicasThroughTheBinary(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	url := s.ClientURL() + "/copies"
	r := runBin(t, t.TempDir(), nil, "", "team", "--store", url+"?replicas=3")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "3 copies need a JetStream cluster") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("?replicas=3 on a lone server: exit %d, stderr %q; want exit %d and one sentence", r.code, r.stderr, exit.Failure)
	}
	t.Logf("?replicas=3 on a lone server: %s", r.stderr)
	mustSucceed(t, runBin(t, t.TempDir(), nil, "", "tasks", "--store", url+"?replicas=1"), "tasks with one copy")
	r = runBin(t, t.TempDir(), nil, "", "team", "--store", url+"?replicas=2")
	if r.code != exit.Usage || !strings.Contains(r.stderr, "1, 3 or 5") {
		t.Errorf("?replicas=2: exit %d, stderr %q; want a usage error naming 1, 3 or 5", r.code, r.stderr)
	}
}
