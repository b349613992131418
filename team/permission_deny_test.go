package team

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/testutil/testgit"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/permgate"
)

// TestTheLeadsDenyRulesHoldOnAWorker: a worker whose own policy runs
// every command (yolo) refuses a teammate's command that the lead's deny
// rule, carried in the spawn request, refuses, and says whose rule it was;
// its own deny rules hold as well. Fails without Deny in the request's
// use (the touch runs).
func TestTheLeadsDenyRulesHoldOnAWorker(t *testing.T) {
	ws := testgit.Workspace(t)
	var mu sync.Mutex
	var results []string
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		var tools []string
		for _, m := range c.Req.Messages {
			if m.Role == "tool" {
				tools = append(tools, m.Content)
			}
		}
		switch len(tools) {
		case 0:
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"touch lead-denied.txt"}`}}}
		case 1:
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"touch worker-denied.txt"}`}}}
		}
		mu.Lock()
		results = tools
		mu.Unlock()
		return fakellm.Reply{Content: c.Agent + ": done"}
	})
	defer srv.Close()
	worker, err := permission.ParseRule("bash(touch worker-denied.txt)")
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := runQueuedOn(t, ws, srv, hosts.Request{ID: "spawn-frank-1", Name: "frank", Role: "programmer",
		Deny: []string{"bash(touch lead-denied.txt)"}}, "HEAD", func(o *Options) {
		o.Permissions = &permgate.Options{Delegate: permgate.DelegateTeam, Policy: permission.Policy{Mode: permission.ModeYolo,
			Deny: []permission.Entry{{Rule: worker, From: "flag --deny"}}}}
	})
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(res, "frank: done") || len(results) != 2 {
		t.Fatalf("frank's result: %s\ntool results: %q", res, results)
	}
	for i, f := range []string{"lead-denied.txt", "worker-denied.txt"} {
		if _, err := os.Stat(filepath.Join(ws.Root, f)); !os.IsNotExist(err) {
			t.Errorf("%s was made: the deny rule did not hold (%v)", f, err)
		}
		if !strings.Contains(results[i], "permission denied:") {
			t.Errorf("the call making %s: %q", f, results[i])
		}
	}
	if !strings.Contains(results[0], "(the lead's deny rule)") || !strings.Contains(results[1], "(flag --deny)") {
		t.Errorf("whose rule refused is not said: %q", results)
	}
}
