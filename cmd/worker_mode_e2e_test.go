package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// A lead in yolo cannot make a worker run yolo that its person did not
// start so: a worker in ask runs alice asking, and one with no mode at
// all runs her at most in auto-edit. Either way her command is asked —
// denied at once, as the lead's run has nobody to ask — and never run.
func TestAYoloLeadDoesNotMakeAWorkerRunYolo(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"worker in ask", []string{"--permission-mode", "ask"}},
		{"worker with no mode", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nt := startNATSTeam(t, "yololead")
			srv, env := fakeModel(t, fakellm.Queue(map[string][]fakellm.Reply{
				"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate",
					`{"name":"alice","role":"runner","prompt":"run it","labels":["remote"]}`)}}},
				"alice": {
					{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"touch ran.txt"}`)}},
					{Content: "alice: done"},
				},
			}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} }))
			wdir, wait, pid := startWorker(t, nt, env, "w1", append([]string{"--labels", "remote"}, tc.args...)...)
			r := runBin(t, t.TempDir(), env, "", "run", "--store", nt.url, "--permission-mode", "yolo", "have alice run it")
			mustSucceed(t, r, "run")
			stopWorker(t, wait, pid)
			if _, err := os.Stat(filepath.Join(wdir, "ran.txt")); err == nil {
				t.Fatal("alice's command ran on the worker without asking: the lead's yolo was followed")
			}
			var result string
			for _, c := range srv.Calls() {
				if c.Agent != "alice" || c.N != 1 {
					continue
				}
				for _, m := range c.Req.Messages {
					if m.Role == "tool" {
						result = m.Content
					}
				}
			}
			if !strings.Contains(result, "ask") && !strings.Contains(result, "permission") {
				t.Fatalf("alice's command was not asked about; its result: %q", result)
			}
		})
	}
}
