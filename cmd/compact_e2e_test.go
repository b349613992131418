package cmd

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// /compact in the chat summarizes the older half of the lead's
// conversation at once: the next request holds the summary instead of the
// early turns, the session file keeps them all; /cost lists what each
// agent spent.
func TestCompactAndCostInTheChat(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "noted"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	lc := startLineChat(t, ws, append(fakeEnv(srv), "TERM=dumb"), "chat")
	for i, line := range []string{"first turn alpha", "second turn beta", "third turn gamma", "fourth turn delta"} {
		lc.send(line)
		lc.waitFor("noted", i+1)
	}
	lc.send("/compact")
	lc.waitFor("Compacted the lead's conversation", 1)
	lc.send("/cost")
	lc.waitFor("AGENT", 1)
	lc.send("after compacting")
	lc.waitFor("noted", 5)
	reqs := srv.Requests("lead")
	last := reqs[len(reqs)-1]
	var all strings.Builder
	for _, m := range last.Messages {
		all.WriteString(m.Content + "\n")
	}
	if !strings.Contains(all.String(), "[earlier conversation compacted") || strings.Contains(all.String(), "second turn beta") ||
		!strings.Contains(all.String(), "first turn alpha") || !strings.Contains(all.String(), "after compacting") {
		t.Fatalf("the request after /compact:\n%s", all.String())
	}
	out := lc.output()
	if !strings.Contains(out, "lead") || !strings.Contains(out, "team") || !strings.Contains(out, "TOKENS") {
		t.Errorf("/cost printed no table:\n%s", out)
	}
	session := readSession(t, state(ws, "sessions", "lead.jsonl"))
	var kept bool
	for _, m := range session {
		kept = kept || m.Content == "second turn beta"
	}
	if !kept {
		t.Error("the session file lost a compacted message")
	}
}
