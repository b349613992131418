package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestTheLeadsDenyRuleHoldsOnAWorker: `run --deny RULE` refuses the call
// of a teammate run by a worker process (whose policy, following the
// lead's mode, is yolo): the rule travels in the spawn request, and the
// teammate reads whose rule it was. Fails without the rule in the request.
func TestTheLeadsDenyRuleHoldsOnAWorker(t *testing.T) {
	nt := startNATSTeam(t, "deny")
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent != "lead" {
			if !called(msgs, "bash") {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"touch denied.txt"}`)}}
			}
			return fakellm.Reply{Content: c.Agent + ": tried"}
		}
		if !called(msgs, "spawn_teammate") {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("spawn_teammate",
				`{"name":"alice","role":"programmer","prompt":"touch denied.txt","labels":["b"]}`)}}
		}
		if lastResult(msgs, "alice") == "" {
			return fakellm.Reply{Content: "lead: waiting"}
		}
		return fakellm.Reply{Content: "lead: done"}
	}, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	worker := t.TempDir()
	_, waitWorker, workerPID := startWorkerIn(t, nt, worker, env, "worker", "--store", nt.url, "--labels", "b")
	r := runBin(t, t.TempDir(), env, "", "run", "--store", nt.url, "--deny", "bash(touch *)", "one teammate on the worker")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	if _, err := os.Stat(filepath.Join(worker, "denied.txt")); !os.IsNotExist(err) {
		t.Fatalf("the worker ran a command the lead's deny rule refuses: %v", err)
	}
	conv := srv.Requests("alice")
	var result string
	for _, m := range conv[len(conv)-1].Messages {
		if m.Role == "tool" {
			result = m.Content
		}
	}
	if !strings.Contains(result, "permission denied") || !strings.Contains(result, "bash(touch *) (the lead's deny rule)") {
		t.Fatalf("alice's bash result: %q", result)
	}
	stopWorker(t, waitWorker, workerPID)
}
