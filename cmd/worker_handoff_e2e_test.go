package cmd

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/registry"
)

// Handoffs across processes: alice and bob run on a worker process, the
// lead in another. The lead hands a task to bob (the receiver on a
// worker), and alice hands one to the lead (the giver on a worker): each
// is accepted, its context reaches the receiver's conversation, and both
// sides end completed in the registry.
func TestHandoffsWithTeammatesOnAWorker(t *testing.T) {
	nt := startNATSTeam(t, "handoffs")
	var handed atomic.Bool
	bobIdle := regexp.MustCompile(`(?m)^bob\s+writer\s+idle\s`)
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		seen := func(s string) bool {
			for _, m := range msgs {
				if strings.Contains(m.Content, s) {
					return true
				}
			}
			return false
		}
		switch c.Agent {
		case "lead":
			if !called(msgs, "spawn_teammate") {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
					call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"hand the review to the lead","labels":["remote"]}`),
					call("spawn_teammate", `{"name":"bob","role":"writer","prompt":"get ready","labels":["remote"]}`),
				}}
			}
			if seen("bob: ready") && !handed.Load() {
				// bob reports before his process marks him idle: the lead looks until he is.
				if last := msgs[len(msgs)-1]; last.Role == "tool" && bobIdle.MatchString(last.Content) {
					handed.Store(true)
					return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("handoff",
						`{"to":"bob","task":"write the notes","reason":"you are free","context":"the outline is in the issue"}`)}}
				}
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("list_teammates", `{}`)}}
			}
			return fakellm.Reply{Content: "lead: noted"}
		case "alice":
			if !called(msgs, "handoff") {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("handoff",
					`{"to":"lead","task":"review the notes","reason":"the lead decides","context":"nothing reviewed yet"}`)}}
			}
			return fakellm.Reply{Content: "alice: handed over"}
		case "bob":
			if seen("the outline is in the issue") {
				return fakellm.Reply{Content: "bob: took over the notes"}
			}
			return fakellm.Reply{Content: "bob: ready"}
		}
		return fakellm.Reply{Content: c.Agent + ": noted"}
	}
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	startWorker(t, nt, env, "w1", "--labels", "remote")
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "share the notes work")
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	res := strings.Join(toolResults(t, lead, "lead"), "\n")
	if !strings.Contains(res, `Handed the task "write the notes" to bob`) {
		t.Errorf("the lead's handoff to bob on the worker did not complete:\n%s", res)
	}
	var bobGot bool
	for _, req := range srv.Requests("bob") {
		for _, m := range req.Messages {
			bobGot = bobGot || strings.Contains(m.Content, "the outline is in the issue")
		}
	}
	if !bobGot {
		t.Error("the lead's context never reached bob's conversation on the worker")
	}
	var leadGot bool
	for _, req := range srv.Requests("lead") {
		for _, m := range req.Messages {
			leadGot = leadGot || strings.Contains(m.Content, "nothing reviewed yet")
		}
	}
	if !leadGot {
		t.Error("alice's context never reached the lead's conversation")
	}

	out := runBin(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + nt.url}, "", "team", "--json")
	mustSucceed(t, out, "team --json")
	var c struct {
		Teammates    []registry.Member
		LeadHandoffs []registry.HandoffState `json:"leadHandoffs"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &c); err != nil {
		t.Fatal(err)
	}
	sides := map[string]registry.HandoffStatus{}
	for _, h := range c.LeadHandoffs {
		sides["lead "+string(h.Role)+" "+h.Peer] = h.State
	}
	for _, m := range c.Teammates {
		for _, h := range m.Handoffs {
			sides[m.Name+" "+string(h.Role)+" "+h.Peer] = h.State
		}
	}
	for _, side := range []string{"lead sender bob", "bob receiver lead", "alice sender lead", "lead receiver alice"} {
		if sides[side] != registry.HandoffCompleted {
			t.Errorf("%s: %q, want completed (all: %v)", side, sides[side], sides)
		}
	}
}
