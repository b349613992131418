package cmd

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/registry"
)

// --max-queue bounds the spawns that wait for a worker on a team across
// hosts as it bounds one process's queue: with one spawn waiting for a
// worker labelled gpu (there is none), the next is refused to the lead's
// model in one sentence, and the first fails at its placement time.
func TestMaxQueueBoundsSpawnsWaitingForAWorker(t *testing.T) {
	nt := startNATSTeam(t, "maxqueue")
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"trainer","prompt":"train it","labels":["gpu"]}`),
				call("spawn_teammate", `{"name":"bob","role":"trainer","prompt":"train it too","labels":["gpu"]}`),
			}},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := fakeEnv(srv)
	lead := t.TempDir()
	r := runBin(t, lead, env, "", "run", "--store", nt.url, "--max-queue", "1", "--placement-timeout", "2s", "train two models")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	// The two spawns run side by side: whichever came second is refused.
	res := toolResults(t, lead, "lead")
	if len(res) < 2 {
		t.Fatalf("the lead's tool results: %q", res)
	}
	var spawned, refused string
	for i, name := range []string{"alice", "bob"} {
		switch {
		case strings.Contains(res[i], "Spawned teammate "+name):
			spawned += name
		case strings.Contains(res[i], "could not spawn "+name+": the spawn queue is full: 1 spawns already wait for a worker to take them (--max-queue 1)"):
			refused += name
		default:
			t.Errorf("the spawn of %s: %q", name, res[i])
		}
	}
	if len(spawned) == 0 || len(refused) == 0 {
		t.Fatalf("spawned %q, refused %q: want one of each", spawned, refused)
	}
	members := teamJSON(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + nt.url})
	if len(members) != 1 || members[0].Name != spawned || members[0].Status != registry.StatusFailed {
		t.Errorf("team: %+v, want only %s, failed unplaced", members, spawned)
	}
}
