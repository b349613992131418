package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

// natsTeam is an embedded JetStream server for one test and a client of it.
type natsTeam struct {
	url  string // the store URL, with the team
	nc   *nats.Conn
	team string
}

func startNATSTeam(t *testing.T, name string) natsTeam {
	t.Helper()
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	nt := natsTeam{url: s.ClientURL() + "/" + name, nc: nc, team: name}
	// Run before the server stops: the event log says what went wrong.
	t.Cleanup(func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	})
	return nt
}

// fakeModel starts the fake model server with script for one test and
// returns the environment that points the binary at it.
func fakeModel(t *testing.T, script fakellm.Script) (*fakellm.Server, []string) {
	t.Helper()
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	t.Cleanup(srv.Close)
	return srv, fakeEnv(srv)
}

// members is what `team --json` says of the team's teammates, run in a
// directory of its own with the store in its environment.
func (nt natsTeam) members(t *testing.T) []registry.Member {
	t.Helper()
	return teamJSON(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + nt.url})
}

// inbox is every message of name's inbox on the store.
func (nt natsTeam) inbox(t *testing.T, name string) []inbox.Message {
	t.Helper()
	mb, err := natsstore.OpenMailbox(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := mb.ReadAll(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// startWorker starts `agentteam worker` in its own directory and returns
// once its heartbeat is on the server.
func startWorker(t *testing.T, nt natsTeam, env []string, id string, args ...string) (dir string, wait func() result, pid func() int) {
	t.Helper()
	dir = t.TempDir()
	wait, pid = startBinPID(t, dir, env, append([]string{"worker", "--store", nt.url, "--id", id}, args...)...)
	beats, err := natsstore.OpenWorkers(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, time.Minute, "worker "+id+"'s heartbeat", func() bool {
		alive, err := beats.Alive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, ok := alive[id]
		return ok
	})
	return dir, wait, pid
}

// startBinPID is startBin that also gives the process's PID, bounded by 3 minutes.
func startBinPID(t *testing.T, dir string, env []string, args ...string) (func() result, func() int) {
	t.Helper()
	return startBinWithin(t, 3*time.Minute, dir, env, args...)
}

// teamJSON is what `team --json` says of the teammates, read from dir.
func teamJSON(t *testing.T, dir string, env []string) []registry.Member {
	t.Helper()
	r := runBin(t, dir, env, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	var c struct{ Teammates []registry.Member }
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("team --json: %v\n%s", err, r.stdout)
	}
	return c.Teammates
}

// assertEachOnceOnNATS checks that every message of name's inbox on the
// store is in its conversation exactly once: the lead's is a file under
// ws, a teammate's in the team's session stream.
func assertEachOnceOnNATS(t *testing.T, nt natsTeam, ws, name string) {
	t.Helper()
	msgs := nt.inbox(t, name)
	var data []byte
	var err error
	if name == "lead" {
		if data, err = os.ReadFile(filepath.Join(ws, ".agentteam", "sessions", name+".jsonl")); err != nil {
			t.Fatal(err)
		}
	} else {
		sessions, err := natsstore.OpenSessions(context.Background(), nt.nc, nt.team)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := sessions.Log(name).Lines(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Join(lines, []byte("\n"))
	}
	if len(msgs) == 0 {
		t.Fatalf("%s's inbox on the store is empty", name)
	}
	for _, m := range msgs {
		tag := `id=\"` + m.ID + `\"`
		if n := strings.Count(string(data), tag); n != 1 {
			t.Errorf("%s's message %s (%q from %s) is in its conversation %d times, want once", name, m.ID, event.FirstLine(m.Content, 40), m.From, n)
		}
	}
	mb, err := natsstore.OpenMailbox(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := mb.Stats(t.Context(), name); st.Unread != 0 {
		t.Errorf("%s still has %d unread", name, st.Unread)
	}
}

// TestTeammatesRunOnAWorkerProcess: the lead's run in one process and
// `agentteam worker --labels remote` in another, with its own directory.
// The lead's spawns ask for the label, so the worker runs them (the
// registry says so); a teammate's message to another crosses to it, their
// results reach the lead's answer, every teammate ends shutdown when the
// run ends, and each message is in its conversation once. The worker then
// ends cleanly on SIGTERM.
func TestTeammatesRunOnAWorkerProcess(t *testing.T) {
	nt := startNATSTeam(t, "hosts")
	srv, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the greeting","labels":["remote"]}`),
				call("spawn_teammate", `{"name":"bob","role":"tester","prompt":"check the greeting","labels":["remote"]}`),
			}},
			{Content: "spawned both"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"bob","content":"the greeting is hello"}`)}},
			{Content: "alice: greeting written"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "lead: both reported"}
		}
		return fakellm.Reply{Content: c.Agent + ": done"}
	}))

	wdir, waitWorker, workerPID := startWorker(t, nt, env, "w1", "--labels", "remote,linux")
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "write a greeting and check it")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if !strings.Contains(r.stdout, "lead: both reported") {
		t.Fatalf("the lead's answer: %q", r.stdout)
	}

	members := nt.members(t)
	if len(members) != 2 {
		t.Fatalf("team --json: %+v", members)
	}
	for _, m := range members {
		if m.Worker != "w1" || m.Host == "" || m.PID != workerPID() {
			t.Errorf("%s ran on worker %q host %q pid %d, want w1 (pid %d)", m.Name, m.Worker, m.Host, m.PID, workerPID())
		}
		if m.Status != registry.StatusShutdown || m.Cycles == 0 {
			t.Errorf("%s: %s after %d cycles, want shutdown after some", m.Name, m.Status, m.Cycles)
		}
		if strings.Join(m.Labels, ",") != "remote" {
			t.Errorf("%s asked for labels %v", m.Name, m.Labels)
		}
	}
	// The teammates' conversations are in the store, on nobody's disk.
	for _, name := range []string{"alice", "bob"} {
		for _, dir := range []string{lead, wdir} {
			if _, err := os.Stat(filepath.Join(dir, ".agentteam", "sessions", name+".jsonl")); err == nil {
				t.Errorf("%s's conversation is a file in %s", name, dir)
			}
		}
		assertEachOnceOnNATS(t, nt, wdir, name)
	}
	assertEachOnceOnNATS(t, nt, lead, "lead")

	// The results reached the lead.
	msgs := nt.inbox(t, "lead")
	results := map[string]int{}
	for _, m := range msgs {
		if m.Type == "result" {
			results[m.From]++
		}
	}
	if results["alice"] == 0 || results["bob"] == 0 {
		t.Errorf("results in the lead's inbox: %v", results)
	}

	if err := syscall.Kill(workerPID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w := waitWorker()
	if w.code != 0 {
		t.Fatalf("worker exit %d on SIGTERM\n%s", w.code, w.stderr)
	}
	for _, m := range nt.members(t) {
		if m.Status == registry.StatusWorking || m.Status == registry.StatusQueued {
			t.Errorf("%s left %s by the stopped worker", m.Name, m.Status)
		}
	}
}

// dumpEvents logs the team's event log, to see what went wrong.
func dumpEvents(t *testing.T, nt natsTeam) {
	t.Helper()
	ev, err := natsstore.OpenEventLog(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Log(err)
		return
	}
	lines, err := ev.Lines(context.Background())
	if err != nil {
		t.Log(err)
	}
	for _, l := range lines {
		t.Log(string(l))
	}
}

// withLabels is script whose spawns ask for labels.
func withLabels(script fakellm.Script, labels ...string) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		r := script(c)
		for i, tc := range r.ToolCalls {
			if tc.Name != "spawn_teammate" {
				continue
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.Args), &args); err != nil {
				panic(err)
			}
			args["labels"] = labels
			data, _ := json.Marshal(args)
			r.ToolCalls[i].Args = string(data)
		}
		return r
	}
}

// anyOrderPlans is script whose lead reviews a plan request wherever it is
// in what it took in: across processes, alice's plan and her report that
// she waits for it often reach the lead together, the report last.
func anyOrderPlans(script fakellm.Script) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent == "lead" && called(msgs, "spawn_teammate") && !called(msgs, "review_plan") && msgs[len(msgs)-1].Role != "tool" {
			for i := len(msgs) - 1; i >= 0; i-- {
				if m := planRequestRe.FindAllStringSubmatch(msgs[i].Content, -1); len(m) > 0 {
					return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "review_plan",
						Args: fmt.Sprintf(`{"request_id":%q,"approve":true,"feedback":"fine"}`, m[len(m)-1][1])}}}
				}
			}
		}
		return script(c)
	}
}

// TestPlanApprovalAndShutdownOfATeammateOnAWorker: the protocols of
// TestPlanApprovalAndShutdownThroughTheBinary with alice on a worker
// process: her write is refused until the lead, in another process,
// approves her plan; she then writes in the worker's directory; the
// lead's shutdown_teammate reaches her there and the runtime answers it.
func TestPlanApprovalAndShutdownOfATeammateOnAWorker(t *testing.T) {
	nt := startNATSTeam(t, "plans")
	srv, env := fakeModel(t, withLabels(anyOrderPlans(protocolScript), "remote"))
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote")
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "have alice write notes, with a plan first")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if data, err := os.ReadFile(filepath.Join(wdir, "notes.txt")); err != nil || string(data) != "notes\n" {
		t.Fatalf("notes.txt in the worker's directory: %q %v\n%s", data, err, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(lead, "notes.txt")); err == nil {
		t.Fatal("alice wrote in the lead's directory")
	}
	reqs := srv.Requests("alice")
	if len(reqs) < 2 {
		t.Fatalf("alice made %d calls", len(reqs))
	}
	if refused := reqs[1].Messages[len(reqs[1].Messages)-1]; refused.Role != "tool" || !strings.Contains(refused.Content, "plan mode") {
		t.Fatalf("the write before approval was not refused: %+v", refused)
	}
	msgs := nt.inbox(t, "lead")
	var planID, shutdownBy string
	for _, m := range msgs {
		switch m.Type {
		case protocol.TypePlanApprovalRequest:
			planID = m.CorrelationID
		case protocol.TypeShutdownResponse:
			var p struct {
				Approve bool   `json:"approve"`
				By      string `json:"by"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || !p.Approve {
				t.Fatalf("shutdown response %+v (%v)", m, err)
			}
			shutdownBy = p.By
		}
	}
	if planID == "" || shutdownBy != "runtime" {
		t.Fatalf("the lead's inbox lacks the plan request or the runtime's shutdown answer: %+v", msgs)
	}
	members := nt.members(t)
	if len(members) != 1 || members[0].Worker != "w1" || members[0].Status != registry.StatusShutdown || members[0].PlanState != registry.PlanApproved {
		t.Fatalf("alice in the registry: %+v", members)
	}
	assertEachOnceOnNATS(t, nt, wdir, "alice")
	assertEachOnceOnNATS(t, nt, lead, "lead")
}

// TestSpawnsArePlacedByLabels: two workers with different labels each
// take only the spawns that ask for theirs (bob's by his role's labels in
// the project's config); a spawn asking for a label no worker has fails
// with a sentence once its placement time is up, and the lead hears of it.
func TestSpawnsArePlacedByLabels(t *testing.T) {
	nt := startNATSTeam(t, "labels")
	srv, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"trainer","prompt":"train","labels":["gpu"]}`),
				call("spawn_teammate", `{"name":"bob","role":"builder","prompt":"build"}`),
				call("spawn_teammate", `{"name":"carol","role":"oracle","prompt":"foresee","labels":["tpu"]}`),
			}},
			{Content: "spawned three"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "lead: done"}
		}
		return fakellm.Reply{Content: c.Agent + ": done"}
	}))
	startWorker(t, nt, env, "wgpu", "--labels", "gpu,linux")
	startWorker(t, nt, env, "wcpu", "--labels", "cpu")
	lead := t.TempDir()
	writeConfig(t, filepath.Join(lead, ".agentteam", "config.toml"), "[roles.builder]\nmodel = \"fake-model\"\nlabels = [\"cpu\"]\n")
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--placement-timeout", "10s", "place them")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	want := map[string]string{"alice": "wgpu", "bob": "wcpu"}
	for _, m := range nt.members(t) {
		switch m.Name {
		case "carol":
			if m.Status != registry.StatusFailed || m.Worker != "" || !strings.Contains(m.Error, "no worker with the labels tpu") {
				t.Errorf("carol: %s on %q: %q; want failed, unplaced", m.Status, m.Worker, m.Error)
			}
		default:
			if m.Worker != want[m.Name] || m.Status != registry.StatusShutdown {
				t.Errorf("%s: %s on %q, want shutdown on %s", m.Name, m.Status, m.Worker, want[m.Name])
			}
			if m.Name == "bob" && strings.Join(m.Labels, ",") != "cpu" {
				t.Errorf("bob, a builder, asked for %v, want his role's cpu", m.Labels)
			}
		}
	}
	msgs := nt.inbox(t, "lead")
	told := false
	for _, m := range msgs {
		if m.From == "carol" && m.Type == "error" && strings.Contains(m.Content, "no worker with the labels tpu") {
			told = true
		}
	}
	if !told {
		t.Errorf("the lead was not told carol could not be placed: %+v", msgs)
	}
}

// TestAKilledWorkersTeammateIsRespawnedOnAnother: alice works on w1 when
// w1 is killed with SIGKILL. Its heartbeat expires, the lead's process
// marks her failed (an event, and the lead told), respawns her, and w2
// takes her: she goes on from her conversation in the store, reports,
// and ends shutdown, each message in her conversation once.
func TestAKilledWorkersTeammateIsRespawnedOnAnother(t *testing.T) {
	nt := startNATSTeam(t, "dead")
	var mu sync.Mutex
	aliceCalls := 0
	srv, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser","labels":["one"]}`)}},
			{Content: "spawned alice"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent != "alice" {
			return fakellm.Reply{Content: "lead: noted"}
		}
		mu.Lock()
		defer mu.Unlock()
		aliceCalls++
		if aliceCalls == 1 { // on w1, which is killed meanwhile
			return fakellm.Reply{Content: "never arrives", Delay: 2 * time.Minute}
		}
		return fakellm.Reply{Content: "alice: parser written"}
	}))
	_, _, w1 := startWorker(t, nt, env, "w1", "--labels", "one")
	waitLead, _ := startBinPID(t, t.TempDir(), env, "run", "--store", nt.url, "write a parser")
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	reg := nt.registry(t)
	alice := func() registry.Member {
		c, err := reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if i := c.Find("alice"); i >= 0 {
			return c.Teammates[i]
		}
		return registry.Member{}
	}
	// alice works on w1 and her model call is under way.
	testkit.EventuallyF(t, time.Minute, "alice working on w1", func() bool {
		m := alice()
		return m.Status == registry.StatusWorking && m.Worker == "w1" && len(srv.Requests("alice")) > 0
	}, func() string { return fmt.Sprintf("alice is %+v", alice()) })
	if err := syscall.Kill(w1(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// w2 starts after the kill: only it can take the respawn.
	startWorker(t, nt, env, "w2", "--labels", "one")
	r := waitLead()
	mustSucceed(t, r, "run")
	m := alice()
	if m.Worker != "w2" || m.Status != registry.StatusShutdown || m.Cycles == 0 {
		t.Fatalf("alice after w1 died: %s on %q after %d cycles, want shutdown on w2", m.Status, m.Worker, m.Cycles)
	}
	ev, err := natsstore.OpenEventLog(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := ev.Lines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, l := range lines {
		if strings.Contains(string(l), `"status":"failed"`) && strings.Contains(string(l), "its worker w1") {
			failed = true
		}
	}
	if !failed {
		t.Error("no event says alice failed with w1")
	}
	msgs := nt.inbox(t, "lead")
	var told, results int
	for _, msg := range msgs {
		switch {
		case msg.From == "alice" && msg.Type == "error" && strings.Contains(msg.Content, "respawned"):
			told++
		case msg.From == "alice" && msg.Type == "result":
			results++
			if !strings.Contains(msg.Content, "parser written") {
				t.Errorf("alice's result: %q", msg.Content)
			}
		}
	}
	if told != 1 || results != 1 {
		t.Errorf("the lead was told %d times of the death and got %d results, want 1 and 1", told, results)
	}
	assertEachOnceOnNATS(t, nt, "", "alice")
}

// TestAStoppedWorkerShutsItsTeammatesDown: SIGTERM to a worker whose
// teammate is mid-call ends the worker with exit 0; the teammate ends
// shutdown, not working, and the lead is told and finishes its run.
func TestAStoppedWorkerShutsItsTeammatesDown(t *testing.T) {
	nt := startNATSTeam(t, "stop")
	srv, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser","labels":["one"]}`)}},
			{Content: "spawned alice"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			return fakellm.Reply{Content: "never arrives", Delay: 2 * time.Minute}
		}
		return fakellm.Reply{Content: "lead: alice stopped"}
	}))
	_, waitWorker, w1 := startWorker(t, nt, env, "w1", "--labels", "one")
	waitLead, _ := startBinPID(t, t.TempDir(), env, "run", "--store", nt.url, "write a parser")
	testkit.Eventually(t, time.Minute, "alice's model call", func() bool { return len(srv.Requests("alice")) > 0 })
	if err := syscall.Kill(w1(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if w := waitWorker(); w.code != 0 {
		t.Fatalf("worker exit %d on SIGTERM\n%s", w.code, w.stderr)
	}
	r := waitLead()
	mustSucceed(t, r, "run")
	if !strings.Contains(r.stdout, "lead: alice stopped") {
		t.Errorf("the lead's answer: %q", r.stdout)
	}
	members := nt.members(t)
	if len(members) != 1 || members[0].Status != registry.StatusShutdown || !strings.Contains(members[0].Error, "its worker w1 stopped") {
		t.Fatalf("alice after her worker stopped: %+v", members)
	}
	msgs := nt.inbox(t, "lead")
	told := 0
	for _, m := range msgs {
		if m.From == "alice" && m.Type == "error" && strings.Contains(m.Content, "its worker w1 stopped") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the lead was told %d times that alice's worker stopped, want once", told)
	}
}

// chat on a NATS store spawns through the team's work queue, as run does:
// a teammate asking for a label only a worker has runs on that worker.
func TestChatOnNATSPlacesATeammateOnAWorker(t *testing.T) {
	nt := startNATSTeam(t, "chathosts")
	_, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the greeting","labels":["remote"]}`),
			}},
			{Content: "spawned alice"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{Content: c.Agent + ": done"}
	}))
	_, _, workerPID := startWorker(t, nt, env, "w1", "--labels", "remote")
	lc := startLineChat(t, t.TempDir(), env, "chat", "--store", nt.url)
	lc.send("spawn alice on the remote worker")
	lc.waitFor("spawned alice", 1)
	// The lead, woken by alice's report from the worker, answers again
	// (the fake's fallback); only then does the input end.
	lc.waitFor("lead: done", 1)
	if err := lc.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code := lc.exit(); code != 0 {
		t.Fatalf("chat exit %d:\n%s", code, lc.output())
	}
	members := nt.members(t)
	if len(members) != 1 || members[0].Worker != "w1" || members[0].PID != workerPID() {
		t.Fatalf("team --json: %+v, want alice on worker w1 (pid %d)", members, workerPID())
	}
	if members[0].Status != registry.StatusShutdown {
		t.Fatalf("alice is %s after the chat ended, want shutdown", members[0].Status)
	}
}

// A run that times out asks its teammates on other workers to shut down:
// they must not go on working, or waiting, for a lead that is gone.
func TestATimedOutRunShutsDownItsTeammatesOnWorkers(t *testing.T) {
	nt := startNATSTeam(t, "abort")
	_, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser","labels":["one"]}`)}},
			// The lead never finishes: the run's --timeout ends it.
			{Content: "never arrives", Delay: 2 * time.Minute},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			return fakellm.Reply{Content: "parser written"}
		}
		return fakellm.Reply{Content: "never arrives", Delay: 2 * time.Minute}
	}))
	startWorker(t, nt, env, "w1", "--labels", "one")
	r := runBin(t, t.TempDir(), env, "", "run", "--store", nt.url, "--timeout", "8s", "write a parser")
	if r.code != 3 {
		t.Fatalf("run exit %d, want 3 (timed out)\n%s", r.code, r.stderr)
	}
	// The worker still runs; alice, asked to stop, ends shut down there.
	var members []registry.Member
	testkit.EventuallyF(t, 45*time.Second, "alice shut down after the lead's run timed out", func() bool {
		members = nt.members(t)
		return len(members) == 1 && members[0].Status == registry.StatusShutdown
	}, func() string { return fmt.Sprintf("the team is %+v", members) })
}

// registry is the team's registry as a process opens it (an entry per
// teammate, team/registry/entries.go), on the test's connection.
func (nt natsTeam) registry(t *testing.T) *registry.Registry {
	t.Helper()
	entries, err := natsstore.OpenEntries(context.Background(), nt.nc, nt.team, "registry", registry.DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(entries.Close)
	registry, err := registry.NewRegistryOnEntries(t.Context(), entries, nt.team, nil)
	if err != nil {
		t.Fatal(err)
	}
	return registry
}
