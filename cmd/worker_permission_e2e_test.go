package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/testutil/testkit"

	"github.com/agentteam/agentteam/team/event"
)

// remoteWriter is a script whose lead spawns alice on a worker labelled
// remote; alice writes notes.txt, then reports.
func remoteWriter(final string) fakellm.Script {
	return fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate",
			`{"name":"alice","role":"writer","prompt":"write the notes","labels":["remote"]}`)}}},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"notes.txt","content":"from the worker\n"}`)}},
			{Content: "alice: " + final},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
}

// An ask of alice, run by a worker process, reaches the person who runs
// the team (--permission-delegate user): `agentteam requests` on another
// host lists it with its worker, `agentteam approve` from there lets the
// worker's blocked call run. The worker gives no --permission-delegate: it
// follows the lead's.
func TestPermissionAskOfATeammateOnAWorkerApprovedFromAnotherHost(t *testing.T) {
	nt := startNATSTeam(t, "askremote")
	srv := fakellm.New(remoteWriter("wrote the notes"), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote", "--permission-mode", "ask")
	lead := t.TempDir()
	wait := startBin(t, lead, env, "run", "--store", nt.url, "--permission-mode", "ask", "--permission-delegate", "user", "have alice write notes")

	other := t.TempDir() // another host: the store is all it shares
	storeEnv := append([]string{"AGENTTEAM_STORE=" + nt.url}, env...)
	a := waitForAsk(t, other, storeEnv)
	if a.Agent != "alice" || a.Tool != "write_file" || a.To != "user" || a.Worker != "w1" || a.State != permask.Waiting {
		t.Fatalf("the ask is %+v", a)
	}
	if _, err := os.Stat(filepath.Join(wdir, "notes.txt")); err == nil {
		t.Fatal("the write ran before the ask was answered")
	}
	human := runBin(t, other, storeEnv, "", "requests")
	mustSucceed(t, human, "requests")
	if !strings.Contains(human.stdout, "alice (on worker w1) asks user") || !strings.Contains(human.stdout, "+from the worker") {
		t.Errorf("requests does not show the ask, its worker and its diff:\n%s", human.stdout)
	}
	mustSucceed(t, runBin(t, other, storeEnv, "", "approve", a.RequestID), "approve")
	r := wait()
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got, err := os.ReadFile(filepath.Join(wdir, "notes.txt")); err != nil || string(got) != "from the worker\n" {
		t.Fatalf("notes.txt in the worker's directory = %q, %v after the approval", got, err)
	}
	if !strings.Contains(r.stderr, "agentteam approve "+a.RequestID) {
		t.Errorf("the lead's progress does not show the worker's ask:\n%s", r.stderr)
	}
	if again := runBin(t, other, storeEnv, "", "deny", a.RequestID, "too late"); again.code == 0 {
		t.Errorf("a second answer to %s was accepted", a.RequestID)
	}
	// `team` says where each teammate ran.
	tr := runBin(t, other, storeEnv, "", "team")
	mustSucceed(t, tr, "team")
	host, _ := os.Hostname()
	if !strings.Contains(tr.stdout, "WORKER") || !strings.Contains(tr.stdout, " w1@"+event.FirstLine(host, 24)) {
		t.Errorf("team does not say alice ran on worker w1:\n%s", tr.stdout)
	}
}

// The lead's line chat shows the ask of a teammate on a worker and the
// person's y there lets the worker's call run.
func TestPermissionAskOfATeammateOnAWorkerAnsweredInTheLeadsChat(t *testing.T) {
	nt := startNATSTeam(t, "askchat")
	srv := fakellm.New(remoteWriter("wrote the notes"), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote", "--permission-mode", "ask")
	lc := startLineChat(t, t.TempDir(), env, "chat", "--store", nt.url)
	lc.send("have alice write notes")
	lc.waitFor("alice asks user for permission: write_file notes.txt", 1)
	if !strings.Contains(lc.output(), "+from the worker") {
		t.Errorf("the chat does not show the diff of alice's write:\n%s", lc.output())
	}
	lc.send("y")
	testkit.EventuallyF(t, time.Minute, "notes.txt in the worker's directory after y", func() bool {
		got, err := os.ReadFile(filepath.Join(wdir, "notes.txt"))
		return err == nil && string(got) == "from the worker\n"
	}, func() string { return "the chat printed:\n" + lc.output() })
	lc.waitFor("alice: write_file  allowed by user", 1) // the ask closed in the chat too
	lc.stdin.Close()
	if code := lc.exit(); code != 0 {
		t.Fatalf("exit %d at the end of input:\n%s", code, lc.output())
	}
}

// Delegated to the lead, the ask of a teammate on a worker reaches the
// lead's model, whose review_permission, in the lead's process, answers
// the worker's call.
func TestPermissionAskOfATeammateOnAWorkerReviewedByTheLead(t *testing.T) {
	nt := startNATSTeam(t, "askreview")
	var reviewed atomic.Bool
	writer := remoteWriter("wrote the notes")
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" && !reviewed.Load() {
			for _, m := range c.Req.Messages {
				if id := permissionIDRE.FindStringSubmatch(m.Content); id != nil {
					reviewed.Store(true)
					return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("review_permission", fmt.Sprintf(`{"request_id":%q,"approve":true}`, id[1]))}}
				}
			}
		}
		return writer(c)
	}, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote", "--permission-mode", "ask")
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--permission-mode", "ask", "--permission-delegate", "lead", "have alice write notes")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got, err := os.ReadFile(filepath.Join(wdir, "notes.txt")); err != nil || string(got) != "from the worker\n" {
		t.Fatalf("notes.txt in the worker's directory = %q, %v: the lead's approval did not reach the worker", got, err)
	}
	if res := toolResults(t, lead, "lead"); !strings.Contains(strings.Join(res, "\n"), "Allowed alice's call on worker w1") {
		t.Errorf("review_permission's result: %q", res)
	}
}

// An ask whose worker was killed waits for nobody, while the lead runs on:
// requests stops listing it once the worker's heartbeat is gone (--all
// shows it abandoned), and approve says the asking process is gone.
func TestPermissionAskOfAKilledWorkerIsAbandoned(t *testing.T) {
	nt := startNATSTeam(t, "askkilled")
	srv := fakellm.New(remoteWriter("wrote the notes"), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	_, _, workerPID := startWorker(t, nt, env, "w1", "--labels", "remote", "--permission-mode", "ask", "--permission-timeout", "10m")
	lead := t.TempDir()
	_ = startBin(t, lead, env, "run", "--store", nt.url, "--permission-delegate", "user", "--permission-timeout", "10m", "have alice write notes")
	other := t.TempDir()
	storeEnv := append([]string{"AGENTTEAM_STORE=" + nt.url}, env...)
	a := waitForAsk(t, other, storeEnv)
	if a.Worker != "w1" || a.State != permask.Waiting {
		t.Fatalf("the ask is %+v", a)
	}
	if err := syscall.Kill(workerPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var asks []permask.Ask
	// Unlisted once the worker's heartbeat has expired (its TTL is 6 s).
	testkit.EventuallyF(t, time.Minute, "requests to stop listing the ask of the killed worker", func() bool {
		asks = requestsJSON(t, other, storeEnv)
		return len(asks) == 0
	}, func() string { return fmt.Sprintf("it lists %+v", asks) })
	all := requestsJSON(t, other, storeEnv, "--all")
	if len(all) != 1 || all[0].RequestID != a.RequestID || all[0].State != permask.Abandoned {
		t.Errorf("requests --all = %+v, want %s abandoned", all, a.RequestID)
	}
	if r := runBin(t, other, storeEnv, "", "approve", a.RequestID); r.code != exit.Failure || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("approve of the killed worker's ask: exit %d, want %d saying the asking process is gone:\n%s", r.code, exit.Failure, r.stderr)
	}
}

// An ask of a teammate on a worker nobody answers is denied at the
// deadline of the lead's --permission-timeout (the worker follows the
// team's), as on one host: the teammate is told, and nothing waits.
func TestPermissionAskOfATeammateOnAWorkerExpiresAtTheTeamsDeadline(t *testing.T) {
	nt := startNATSTeam(t, "askexpires")
	srv := fakellm.New(remoteWriter("could not write"), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote", "--permission-mode", "ask")
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--permission-delegate", "user", "--permission-timeout", "2s", "have alice write notes")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(wdir, "notes.txt")); err == nil {
		t.Fatal("the unanswered write ran")
	}
	var told bool
	for _, req := range srv.Requests("alice") {
		for _, m := range req.Messages {
			told = told || (m.Role == "tool" && strings.Contains(m.Content, "who did not answer within 2s"))
		}
	}
	if !told {
		t.Error("alice was not told her ask expired at the team's 2s deadline")
	}
	storeEnv := append([]string{"AGENTTEAM_STORE=" + nt.url}, env...)
	if asks := requestsJSON(t, t.TempDir(), storeEnv, "--all"); len(asks) != 0 {
		t.Errorf("requests --all lists the expired ask: %+v", asks)
	}
}

// A worker whose person set no permission mode runs each teammate in the
// lead's: a lead that asks (here run --permission-mode ask) is not
// bypassed by the worker's own default, which would run alice's write at
// once (yolo, as run's).
func TestAWorkerWithNoModeFollowsTheLeads(t *testing.T) {
	nt := startNATSTeam(t, "askmode")
	srv := fakellm.New(remoteWriter("wrote the notes"), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	wdir, _, _ := startWorker(t, nt, env, "w1", "--labels", "remote") // no --permission-mode, no config
	lead := t.TempDir()
	wait := startBin(t, lead, env, "run", "--store", nt.url, "--permission-mode", "ask", "--permission-delegate", "user", "have alice write notes")
	other := t.TempDir()
	storeEnv := append([]string{"AGENTTEAM_STORE=" + nt.url}, env...)
	notes := filepath.Join(wdir, "notes.txt")
	var a permask.Ask
	testkit.Eventually(t, time.Minute, "a permission ask in agentteam requests", func() bool {
		if _, err := os.Stat(notes); err == nil {
			t.Fatal("alice's write ran on the worker without asking, though the lead runs in ask mode")
		}
		asks := requestsJSON(t, other, storeEnv)
		if len(asks) > 0 {
			a = asks[0]
		}
		return len(asks) > 0
	})
	if a.Agent != "alice" || a.Tool != "write_file" || a.Worker != "w1" {
		t.Fatalf("the ask is %+v", a)
	}
	mustSucceed(t, runBin(t, other, storeEnv, "", "approve", a.RequestID), "approve")
	mustSucceed(t, wait(), "run")
	if got, err := os.ReadFile(notes); err != nil || string(got) != "from the worker\n" {
		t.Fatalf("notes.txt in the worker's directory = %q, %v after the approval", got, err)
	}
}
