package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofrs/flock"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

// The rejections and timeouts of every protocol, through the built binary
// and the fake model server: what each side is told (inbox lines linked by
// correlation id), what the registry and the board show, which files exist.

// protoTagRe reads a protocol message's type and correlation id from the
// tags an agent sees in its conversation, as a model would.
var protoTagRe = regexp.MustCompile(`type="([a-z_]+)" id="[^"]*" correlation_id="([^"]+)"`)

// requestIDsIn lists, in order, the correlation ids of the messages of a type in a conversation.
func requestIDsIn(msgs []openai.ChatCompletionMessage, typ inbox.MessageType) []string {
	var ids []string
	for _, m := range msgs {
		for _, sub := range protoTagRe.FindAllStringSubmatch(m.Content, -1) {
			if sub[1] == string(typ) {
				ids = append(ids, sub[2])
			}
		}
	}
	return ids
}

// lastCallOf is the newest tool call in a conversation: its name and arguments.
func lastCallOf(msgs []openai.ChatCompletionMessage) (string, string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if n := len(msgs[i].ToolCalls); n > 0 {
			return msgs[i].ToolCalls[n-1].Function.Name, msgs[i].ToolCalls[n-1].Function.Arguments
		}
	}
	return "", ""
}

func useTool(name, args string) fakellm.Reply {
	return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call(name, args)}}
}

// awaitClosed blocks a scripted model call until ch is closed; the bound
// only keeps a broken run from hanging the test (its assertions then fail).
func awaitClosed(ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
	}
}

// protoMessage is the one message of a type with a correlation id in an
// inbox, with its payload decoded.
func protoMessage(t *testing.T, ws, name string, typ inbox.MessageType, correlation string) (inbox.Message, map[string]any) {
	t.Helper()
	var found []inbox.Message
	for _, m := range readInbox(t, ws, name) {
		if m.Type == typ && m.CorrelationID == correlation {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s's inbox has %d %s messages for %s, want 1: %+v", name, len(found), typ, correlation, readInbox(t, ws, name))
	}
	var p map[string]any
	if err := json.Unmarshal(found[0].Payload, &p); err != nil {
		t.Fatalf("payload of %s: %v", typ, err)
	}
	if p["request_id"] != correlation {
		t.Errorf("%s payload request_id %v, want %s", typ, p["request_id"], correlation)
	}
	return found[0], p
}

// onlyOf returns the correlation id of the single message of a type in an inbox.
func onlyOf(t *testing.T, ws, name string, typ inbox.MessageType) string {
	t.Helper()
	var ids []string
	for _, m := range readInbox(t, ws, name) {
		if m.Type == typ {
			ids = append(ids, m.CorrelationID)
		}
	}
	if len(ids) != 1 || ids[0] == "" {
		t.Fatalf("%s's inbox has %s for %v, want exactly one", name, typ, ids)
	}
	return ids[0]
}

// typesFor lists the types of the messages in an inbox linked to a request
// id, joined by commas (one type alone reads as itself).
func typesFor(t *testing.T, ws, name, id string) inbox.MessageType {
	t.Helper()
	var types []string
	for _, m := range readInbox(t, ws, name) {
		if m.CorrelationID == id {
			types = append(types, string(m.Type))
		}
	}
	return inbox.MessageType(strings.Join(types, ","))
}

// toolResults are the tool results of an agent's conversation, in order.
func toolResults(t *testing.T, ws, agent string) []string {
	t.Helper()
	var out []string
	for _, m := range readSession(t, state(ws, "sessions", agent+".jsonl")) {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// wantResults checks each tool result contains its expected part, in order.
func wantResults(t *testing.T, who string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s's tool results:\n%s\nwant %d", who, strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("%s's tool result %d = %q, want it to contain %q", who, i, got[i], w)
		}
	}
}

// handoffSide is an agent's registry entry for one handoff.
func handoffSide(t *testing.T, m registry.Member, id string) registry.HandoffState {
	t.Helper()
	for _, h := range m.Handoffs {
		if h.ID == id {
			return h
		}
	}
	t.Fatalf("%s's registry entry has no handoff %s: %+v", m.Name, id, m.Handoffs)
	return registry.HandoffState{}
}

// TestShutdownRejectedByAWorkingTeammateThroughTheBinary: alice is busy
// when the lead asks her to shut down; she rejects with a reason, the lead
// hears it linked to its request, and she goes on to finish her file. Only
// when the team settles is she shut down, and not by force.
func TestShutdownRejectedByAWorkingTeammateThroughTheBinary(t *testing.T) {
	working := make(chan struct{})
	var once sync.Once
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent == "alice" {
			once.Do(func() { close(working) })
			ids := requestIDsIn(msgs, protocol.TypeShutdownRequest)
			switch {
			case len(ids) == 0:
				return useTool("bash", `{"command":"sleep 0.05"}`) // busy until the request arrives
			case !called(msgs, "respond_shutdown"):
				return useTool("respond_shutdown", fmt.Sprintf(`{"request_id":%q,"approve":false,"reason":"mid-edit of notes.txt"}`, ids[0]))
			case !called(msgs, "write_file"):
				return useTool("write_file", `{"path":"notes.txt","content":"notes\n"}`)
			}
			return fakellm.Reply{Content: "alice: finished notes.txt"}
		}
		switch {
		case !called(msgs, "spawn_teammate"):
			return useTool("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write notes.txt"}`)
		case !called(msgs, "shutdown_teammate"):
			awaitClosed(working)
			return useTool("shutdown_teammate", `{"name":"alice","reason":"wrap up"}`)
		case contentHas(msgs, "alice: finished notes.txt"):
			return fakellm.Reply{Content: "lead: all done"}
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "have alice write notes")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if strings.TrimSpace(r.stdout) != "lead: all done" {
		t.Errorf("final answer %q", r.stdout)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "notes\n" {
		t.Fatalf("notes.txt: %q %v\n%s", data, err, r.stderr)
	}

	id := onlyOf(t, ws, "alice", protocol.TypeShutdownRequest)
	if _, p := protoMessage(t, ws, "alice", protocol.TypeShutdownRequest, id); p["reason"] != "wrap up" || !strings.HasPrefix(id, "shutdown-") {
		t.Errorf("request %s payload %v", id, p)
	}
	msg, p := protoMessage(t, ws, "lead", protocol.TypeShutdownResponse, id)
	if msg.From != "alice" || p["approve"] != false || p["by"] != "teammate" || p["reason"] != "mid-edit of notes.txt" || p["forced"] != nil ||
		!strings.Contains(msg.Content, "rejected the shutdown request: mid-edit of notes.txt") {
		t.Errorf("shutdown response %+v payload %v", msg, p)
	}
	// She kept working: her report reached the lead after the rejection.
	var sawReject, reportAfter bool
	for _, m := range readInbox(t, ws, "lead") {
		switch {
		case m.Type == protocol.TypeShutdownResponse:
			sawReject = true
		case m.Type == inbox.TypeResult && m.From == "alice" && m.Content == "alice: finished notes.txt":
			reportAfter = sawReject
		}
	}
	if !reportAfter {
		t.Errorf("alice's report does not follow her rejection in the lead's inbox: %+v", readInbox(t, ws, "lead"))
	}
	res := toolResults(t, ws, "alice")
	wantResults(t, "alice", res[len(res)-2:], "You rejected the shutdown; keep working.", "Wrote")

	cfg := readRegistry(t, ws)
	a := findMember(t, cfg, "alice")
	if a.Status != registry.StatusShutdown || a.Error != "" || a.Cycles < 1 || cfg.State != registry.StateCompleted {
		t.Errorf("registry: state %s, alice %+v", cfg.State, a)
	}
	if !strings.Contains(r.stderr, "alice is shutdown: the team settled") {
		t.Errorf("alice was not shut down by the settling run:\n%s", r.stderr)
	}
}

// TestShutdownTimeoutForcesTheTeammateThroughTheBinary: alice is stuck in
// a 30 s bash call and cannot answer; after --shutdown-timeout she is shut
// down by force, the lead is told so, and the run ends without waiting
// for the command.
func TestShutdownTimeoutForcesTheTeammateThroughTheBinary(t *testing.T) {
	working := make(chan struct{})
	var once sync.Once
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent == "alice" {
			once.Do(func() { close(working) })
			return useTool("bash", `{"command":"sleep 30"}`)
		}
		switch {
		case !called(msgs, "spawn_teammate"):
			return useTool("spawn_teammate", `{"name":"alice","role":"worker","prompt":"wait a while"}`)
		case !called(msgs, "shutdown_teammate"):
			awaitClosed(working)
			return useTool("shutdown_teammate", `{"name":"alice","reason":"stop waiting"}`)
		case contentHas(msgs, "shut down by force"):
			return fakellm.Reply{Content: "lead: alice was stopped by force"}
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	start := time.Now()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--shutdown-timeout", "300ms", "start alice, then stop her")
	elapsed := time.Since(start)
	mustSucceed(t, r, "run --shutdown-timeout 300ms")
	noViolations(t, srv)
	if elapsed > 20*time.Second {
		t.Fatalf("the run took %s: the forced shutdown waited for the bash command", elapsed)
	}
	if strings.TrimSpace(r.stdout) != "lead: alice was stopped by force" {
		t.Errorf("final answer %q", r.stdout)
	}

	id := onlyOf(t, ws, "alice", protocol.TypeShutdownRequest)
	msg, p := protoMessage(t, ws, "lead", protocol.TypeShutdownResponse, id)
	if msg.From != "alice" || p["forced"] != true || p["approve"] != true || p["by"] != "runtime" ||
		msg.Content != "alice did not answer within 300ms and was shut down by force." {
		t.Errorf("shutdown response %+v payload %v", msg, p)
	}
	cfg := readRegistry(t, ws)
	a := findMember(t, cfg, "alice")
	if a.Status != registry.StatusShutdown || a.Error != "forced shutdown: no answer to the shutdown request within 300ms" || !a.Ended {
		t.Errorf("registry: alice %+v", a)
	}
	if n := srv.CallsFor("alice"); n != 1 {
		t.Errorf("alice made %d model calls, want 1: a forced teammate makes no more", n)
	}
	if !strings.Contains(r.stderr, "alice is shutdown: forced shutdown") {
		t.Errorf("run's progress lacks the forced shutdown:\n%s", r.stderr)
	}
}

// TestPlanRejectedThenApprovedThroughTheBinary: alice's write before any
// review is refused; the lead rejects her first plan with feedback; she
// revises and resubmits; the second plan is approved and only then is
// the file written, as the revised plan says.
func TestPlanRejectedThenApprovedThroughTheBinary(t *testing.T) {
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		last := msgs[len(msgs)-1]
		if c.Agent == "alice" {
			switch {
			case last.Role == "tool" && strings.Contains(last.Content, "Wrote"):
				return fakellm.Reply{Content: "alice: wrote notes.txt"}
			case last.Role == "tool" && strings.Contains(last.Content, "plan mode"):
				return useTool("submit_plan", `{"plan":"write notes.txt"}`)
			case last.Role == "tool" && strings.Contains(last.Content, "Plan submitted"):
				return fakellm.Reply{Content: "alice: plan submitted, waiting"}
			case strings.Contains(last.Content, "approved your plan"):
				return useTool("write_file", `{"path":"notes.txt","content":"notes\nmore notes\n"}`)
			case strings.Contains(last.Content, "rejected your plan"):
				return useTool("submit_plan", `{"plan":"write notes.txt with two lines"}`)
			}
			return useTool("write_file", `{"path":"notes.txt","content":"notes\n"}`)
		}
		ids := requestIDsIn(msgs, protocol.TypePlanApprovalRequest)
		reviews := 0
		for _, m := range msgs {
			for _, tc := range m.ToolCalls {
				if tc.Function.Name == "review_plan" {
					reviews++
				}
			}
		}
		switch {
		case !called(msgs, "spawn_teammate"):
			return useTool("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write notes.txt","plan_mode":true}`)
		case last.Role == "tool":
			return fakellm.Reply{Content: "lead: step done"}
		case len(ids) > reviews && reviews == 0:
			return useTool("review_plan", fmt.Sprintf(`{"request_id":%q,"approve":false,"feedback":"add a second line"}`, ids[reviews]))
		case len(ids) > reviews:
			return useTool("review_plan", fmt.Sprintf(`{"request_id":%q,"approve":true,"feedback":"good"}`, ids[reviews]))
		}
		return fakellm.Reply{Content: "lead: all done"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "have alice write notes, with a plan first")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "notes\nmore notes\n" {
		t.Fatalf("notes.txt: %q %v\n%s", data, err, r.stderr)
	}
	// Refused before any review, submitted twice, written once approved.
	wantResults(t, "alice", toolResults(t, ws, "alice"),
		"error: you are in plan mode", "Plan submitted", "Plan submitted", "Wrote")
	wantResults(t, "lead", toolResults(t, ws, "lead"), "Spawned", "Rejected alice's plan", "Approved alice's plan")

	var ids []string
	for _, m := range readInbox(t, ws, "lead") {
		if m.Type == protocol.TypePlanApprovalRequest {
			ids = append(ids, m.CorrelationID)
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("plan requests %v, want two distinct", ids)
	}
	if _, p := protoMessage(t, ws, "lead", protocol.TypePlanApprovalRequest, ids[1]); p["plan"] != "write notes.txt with two lines" {
		t.Errorf("the resubmitted plan %v", p)
	}
	msg, p := protoMessage(t, ws, "alice", protocol.TypePlanApprovalResponse, ids[0])
	if p["approve"] != false || p["feedback"] != "add a second line" || !strings.Contains(msg.Content, "Feedback: add a second line") {
		t.Errorf("rejection %+v payload %v", msg, p)
	}
	if _, p := protoMessage(t, ws, "alice", protocol.TypePlanApprovalResponse, ids[1]); p["approve"] != true || p["feedback"] != "good" {
		t.Errorf("approval payload %v", p)
	}
	a := findMember(t, readRegistry(t, ws), "alice")
	if !a.PlanMode || a.PlanState != registry.PlanApproved {
		t.Errorf("registry: alice %+v", a)
	}
}

// TestPlanTimeoutThroughTheBinary: the lead does not review alice's plan
// within --plan-timeout; she is told no review came and stays read-only
// (a second write is refused, nothing is written), the registry shows the
// plan rejected, and the lead's review after the deadline is refused.
func TestPlanTimeoutThroughTheBinary(t *testing.T) {
	noReview := make(chan struct{})
	var once sync.Once
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		last := msgs[len(msgs)-1]
		if c.Agent == "alice" {
			timedOut := contentHas(msgs, "did not review your plan")
			switch {
			case last.Role == "tool" && strings.Contains(last.Content, "plan mode") && timedOut:
				return fakellm.Reply{Content: "alice: still read-only"}
			case last.Role == "tool" && strings.Contains(last.Content, "plan mode"):
				return useTool("submit_plan", `{"plan":"write notes.txt"}`)
			case last.Role == "tool" && strings.Contains(last.Content, "Plan submitted"):
				return fakellm.Reply{Content: "alice: plan submitted, waiting"}
			case timedOut:
				once.Do(func() { close(noReview) })
			}
			return useTool("write_file", `{"path":"notes.txt","content":"notes\n"}`)
		}
		ids := requestIDsIn(msgs, protocol.TypePlanApprovalRequest)
		switch {
		case !called(msgs, "spawn_teammate"):
			return useTool("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write notes.txt","plan_mode":true}`)
		case len(ids) > 0 && !called(msgs, "review_plan"):
			// The lead is busy past the deadline, which keeps the run going.
			awaitClosed(noReview)
			return useTool("review_plan", fmt.Sprintf(`{"request_id":%q,"approve":true,"feedback":"late"}`, ids[0]))
		case last.Role == "tool" && called(msgs, "review_plan"):
			return fakellm.Reply{Content: "lead: too late"}
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--plan-timeout", "300ms", "have alice write notes, with a plan first")
	mustSucceed(t, r, "run --plan-timeout 300ms")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		t.Fatal("alice wrote notes.txt without an approved plan")
	}
	id := onlyOf(t, ws, "lead", protocol.TypePlanApprovalRequest)
	msg, p := protoMessage(t, ws, "alice", protocol.TypePlanApprovalResponse, id)
	fb := "the lead did not review your plan within 300ms; you are still read-only"
	if msg.From != "lead" || p["approve"] != false || !strings.HasPrefix(fmt.Sprint(p["feedback"]), fb) ||
		!strings.HasPrefix(msg.Content, "No review: "+fb) {
		t.Errorf("timeout answer %+v payload %v", msg, p)
	}
	wantResults(t, "alice", toolResults(t, ws, "alice"), "error: you are in plan mode", "Plan submitted", "error: you are in plan mode")
	wantResults(t, "lead", toolResults(t, ws, "lead"), "Spawned", "error: there is no plan waiting for review with request id "+fmt.Sprintf("%q", id))
	a := findMember(t, readRegistry(t, ws), "alice")
	if !a.PlanMode || a.PlanState != registry.PlanRejected {
		t.Errorf("registry: alice %+v", a)
	}
}

// TestHandoffRejectionsThroughTheBinary: alice owns t1 and t2. Bob's
// runtime rejects t2 (it asks for a tester; bob is a programmer) and,
// while bob is working, t1 (busy); a handoff to carol, who is run by
// another process, is refused before any message. Both tasks stay alice's.
func TestHandoffRejectionsThroughTheBinary(t *testing.T) {
	bobBusy, release := make(chan struct{}), make(chan struct{})
	var busyOnce, releaseOnce sync.Once
	handoffTo := func(to, task string) fakellm.Reply {
		return useTool("handoff", fmt.Sprintf(`{"to":%q,"task":%q,"reason":"you are free","context":"nothing done yet"}`, to, task))
	}
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		switch c.Agent {
		case "bob":
			if contentHas(msgs, "look at draft.txt") && !contentHas(msgs, "bob: looked at it") {
				busyOnce.Do(func() { close(bobBusy) })
				awaitClosed(release) // bob is working until alice's busy handoff is answered
				return fakellm.Reply{Content: "bob: looked at it"}
			}
			return fakellm.Reply{Content: "bob: standing by"}
		case "alice":
			name, args := lastCallOf(msgs)
			res := lastToolResult(msgs)
			switch {
			case name == "":
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("task_claim", `{"id":"t1"}`), call("task_claim", `{"id":"t2"}`)}}
			case name == "task_claim" || name == "bash":
				return handoffTo("bob", "t2")
			case name == "handoff" && strings.Contains(args, `"t2"`) && strings.Contains(res, "busy"):
				return useTool("bash", `{"command":"sleep 0.1"}`) // bob is still busy with his first job: again
			case name == "handoff" && strings.Contains(args, `"t2"`):
				return handoffTo("carol", "t1")
			case name == "handoff" && strings.Contains(args, "carol"):
				return useTool("send_message", `{"to":"bob","content":"please look at draft.txt"}`)
			case name == "send_message":
				awaitClosed(bobBusy)
				return handoffTo("bob", "t1")
			}
			releaseOnce.Do(func() { close(release) })
			return fakellm.Reply{Content: "alice: t1 and t2 stay mine"}
		}
		switch {
		case !called(msgs, "task_create"):
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"write hello.txt","description":"one line: hello"}`),
				call("task_create", `{"subject":"test hello.txt","description":"check the line","role":"tester"}`),
				call("spawn_teammate", `{"name":"bob","role":"programmer","prompt":"stand by for work"}`),
			}}
		case !spawned(msgs, "alice") && contentHas(msgs, "bob: standing by"):
			return useTool("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"claim t1 and t2, then hand them to bob"}`)
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	registerTeammate(t, ws, "carol", registry.StatusIdle) // alive in the test process, not in the run
	r := runBin(t, ws, fakeEnv(srv), "", "run", "get the hello tasks done")
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	b := tasksJSON(t, ws)
	if len(b.Tasks) != 2 {
		t.Fatalf("board %+v", b.Tasks)
	}
	for _, task := range b.Tasks {
		if task.Owner != "alice" || task.Status != board.TaskInProgress {
			t.Errorf("%s: %s owned by %q, want alice's in progress", task.ID, task.Status, task.Owner)
		}
	}

	// The rejects in alice's inbox, by task: the last try of each.
	rejects := map[string]string{}
	for _, m := range readInbox(t, ws, "alice") {
		if m.Type == handoff.TypeHandoffReject {
			rejects[m.TaskID] = m.CorrelationID
		}
	}
	cfg := readRegistry(t, ws)
	alice, bob := findMember(t, cfg, "alice"), findMember(t, cfg, "bob")
	cases := []struct{ task, why string }{
		{"t2", "its role does not fit: t2 asks for a tester, bob is a programmer"},
		{"t1", "busy: bob is already working at its limit (working)"},
	}
	for _, c := range cases {
		id := rejects[c.task]
		if id == "" {
			t.Errorf("no handoff_reject for %s in alice's inbox", c.task)
			continue
		}
		msg, p := protoMessage(t, ws, "alice", handoff.TypeHandoffReject, id)
		if msg.From != "bob" || p["by"] != "runtime" || p["reason"] != c.why || p["task_id"] != c.task ||
			!strings.Contains(msg.Content, c.why+". The task stays yours.") {
			t.Errorf("%s: reject %+v payload %v", c.task, msg, p)
		}
		if got := typesFor(t, ws, "bob", id); got != handoff.TypeHandoffRequest {
			t.Errorf("%s: bob's inbox has %s for %s, want only the request", c.task, got, id)
		}
		if got := typesFor(t, ws, "alice", id); got != handoff.TypeHandoffReject {
			t.Errorf("%s: alice's inbox has %s for %s, want only the reject", c.task, got, id)
		}
		s := handoffSide(t, alice, id)
		if s.Role != registry.HandoffSender || s.Peer != "bob" || s.TaskID != c.task || s.State != registry.HandoffFailed ||
			s.Reason != "rejected by bob's runtime: "+c.why {
			t.Errorf("%s: alice's side %+v", c.task, s)
		}
		if s := handoffSide(t, bob, id); s.Role != registry.HandoffReceiver || s.Peer != "alice" || s.State != registry.HandoffFailed || s.Reason != "rejected: "+c.why {
			t.Errorf("%s: bob's side %+v", c.task, s)
		}
	}
	// Alice's tool results: the rejects as results, carol refused as an error.
	var refused, rejected int
	for _, res := range toolResults(t, ws, "alice") {
		switch {
		case strings.Contains(res, "carol"):
			refused++
			if res != "error: could not hand t1 to carol: carol is not run by this agentteam process" {
				t.Errorf("the handoff to carol: %q", res)
			}
		case strings.HasPrefix(res, "bob's runtime rejected the handoff of t"):
			rejected++
		}
	}
	if refused != 1 || rejected < 2 {
		t.Errorf("alice saw %d refusals and %d rejects:\n%s", refused, rejected, strings.Join(toolResults(t, ws, "alice"), "\n"))
	}
	carol := findMember(t, cfg, "carol")
	if len(carol.Handoffs) != 0 || carol.Status != registry.StatusIdle || len(readInbox(t, ws, "carol")) != 0 {
		t.Errorf("the refused handoff touched carol: %+v", carol)
	}
}

// TestHandoffTimeoutThroughTheBinary: the handoff request cannot reach bob
// within --handoff-timeout because another process (this test) holds his
// inbox's lock; the handoff fails at that step, alice is told why and keeps
// t1, and the request delivered late changes nothing.
func TestHandoffTimeoutThroughTheBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("flocks an inbox, which appends wait for only on Unix")
	}
	ws := t.TempDir()
	bobInbox := flock.New(state(ws, "inbox", "bob.jsonl")) // the log itself: every appender flocks it
	released := make(chan struct{})
	var holdOnce sync.Once
	var held atomic.Bool
	// hold locks bob's inbox until alice has been told of the failure.
	hold := func() {
		held.Store(true)
		if err := bobInbox.Lock(); err != nil {
			close(released)
			return
		}
		go func() {
			defer close(released)
			defer bobInbox.Unlock()
			// Not testkit: off the test's goroutine, and past the bound it
			// only lets the inbox go.
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				msgs, _, err := inbox.NewStore(state(ws, "inbox")).ReadAll(t.Context(), "alice")
				if err == nil && hasType(msgs, handoff.TypeHandoffFailed) {
					return
				}
				time.Sleep(20 * time.Millisecond) // another process's file: polled
			}
		}()
	}
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		switch c.Agent {
		case "bob":
			return fakellm.Reply{Content: "bob: standing by"}
		case "alice":
			switch name, _ := lastCallOf(msgs); name {
			case "":
				return useTool("task_claim", `{"id":"t1"}`)
			case "task_claim":
				holdOnce.Do(hold)
				return useTool("handoff", `{"to":"bob","task":"t1","reason":"bob is free","context":"nothing done yet"}`)
			}
			return fakellm.Reply{Content: "alice: t1 stays mine"}
		}
		switch {
		case !called(msgs, "task_create"):
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"write hello.txt","description":"one line: hello"}`),
				call("spawn_teammate", `{"name":"bob","role":"programmer","prompt":"stand by for work"}`),
			}}
		case !spawned(msgs, "alice") && contentHas(msgs, "bob: standing by"):
			return useTool("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"claim t1, then hand it to bob"}`)
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--handoff-timeout", "300ms", "get hello.txt written")
	if !held.Load() {
		t.Fatalf("alice never tried the handoff\n%s", r.stderr)
	}
	<-released // closed within 20 s of the hold, whatever happened
	mustSucceed(t, r, "run --handoff-timeout 300ms")
	noViolations(t, srv)

	id := onlyOf(t, ws, "bob", handoff.TypeHandoffRequest)
	why := "no answer to the handoff request within 300ms"
	msg, p := protoMessage(t, ws, "alice", handoff.TypeHandoffFailed, id)
	if msg.From != "bob" || p["by"] != "runtime" || p["reason"] != why ||
		msg.Content != fmt.Sprintf("The handoff of t1 (write hello.txt) to bob (request %s) failed: %s. The task stays yours.", id, why) {
		t.Errorf("failure %+v payload %v", msg, p)
	}
	// The request reached bob late; his runtime did not answer it any more.
	if got := typesFor(t, ws, "bob", id); got != handoff.TypeHandoffRequest {
		t.Errorf("bob's inbox has %s for %s, want only the late request", got, id)
	}
	if got := typesFor(t, ws, "alice", id); got != handoff.TypeHandoffFailed {
		t.Errorf("alice's inbox has %s for %s, want only the failure", got, id)
	}
	wantResults(t, "alice", toolResults(t, ws, "alice"), "You own t1 now", "failed: "+why+". The task stays yours.")
	b := tasksJSON(t, ws)
	if len(b.Tasks) != 1 || b.Tasks[0].Owner != "alice" || b.Tasks[0].Status != board.TaskInProgress {
		t.Errorf("board %+v", b.Tasks)
	}
	cfg := readRegistry(t, ws)
	a, bo := handoffSide(t, findMember(t, cfg, "alice"), id), handoffSide(t, findMember(t, cfg, "bob"), id)
	if a.Role != registry.HandoffSender || a.State != registry.HandoffFailed || a.Reason != why {
		t.Errorf("alice's side %+v", a)
	}
	if bo.Role != registry.HandoffReceiver || bo.State != registry.HandoffFailed || bo.Reason != why {
		t.Errorf("bob's side %+v", bo)
	}
}

func hasType(msgs []inbox.Message, typ inbox.MessageType) bool {
	for _, m := range msgs {
		if m.Type == typ {
			return true
		}
	}
	return false
}

// TestTaskClaimRefusalsThroughTheBinary: the board refuses alice a task the
// lead holds, completing it for the lead, a task blocked by it, and a task
// already completed; the board is unchanged by her tries.
func TestTaskClaimRefusalsThroughTheBinary(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("task_create", `{"subject":"write hello.txt","description":"one line: hello"}`),
				call("task_claim", `{"id":"t1"}`),
				call("task_create", `{"subject":"check hello.txt","description":"read it back","blocked_by":["t1"]}`),
				call("task_create", `{"subject":"write the docs","description":"a README"}`),
				call("task_update", `{"id":"t3","status":"completed","note":"written"}`),
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"take what you can"}`),
			}},
			{Content: "lead: alice is looking"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{
				call("task_claim", `{"id":"t1"}`),
				call("task_update", `{"id":"t1","status":"completed","note":"mine now"}`),
				call("task_update", `{"id":"t1","status":"pending","note":"let go"}`),
				call("task_claim", `{"id":"t2"}`),
				call("task_claim", `{"id":"t3"}`),
			}},
			{Content: "alice: nothing for me"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} })
	srv := fakellm.New(script)
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "set up the board")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	wantResults(t, "alice", toolResults(t, ws, "alice"),
		"error: could not claim t1: t1 is owned by lead: the task belongs to someone else",
		"error: could not update t1: t1 is owned by lead: only the owner or the lead may do that",
		"error: could not update t1: t1 is owned by lead: only the owner or the lead may do that",
		"error: could not claim t2: t2 waits for t1 to be completed: the task is blocked by unfinished tasks",
		"error: could not claim t3: t3 is already completed (by lead): the task is not pending",
	)
	b := tasksJSON(t, ws)
	want := map[string][2]string{"t1": {string(board.TaskInProgress), "lead"}, "t2": {string(board.TaskPending), ""}, "t3": {string(board.TaskCompleted), "lead"}}
	if len(b.Tasks) != len(want) {
		t.Fatalf("board %+v", b.Tasks)
	}
	for _, task := range b.Tasks {
		if w := want[task.ID]; string(task.Status) != w[0] || task.Owner != w[1] {
			t.Errorf("%s: %s owned by %q, want %s by %q", task.ID, task.Status, task.Owner, w[0], w[1])
		}
	}
	for _, e := range readEvents(t, state(ws, "events.jsonl")) {
		if e.Kind == event.EventTask && strings.HasPrefix(e.Detail, "alice ") {
			t.Errorf("a refused try changed the board: %s", e.Detail)
		}
	}
}
