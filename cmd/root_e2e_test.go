package cmd

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

// agentteam alone opens the chat, with chat's flags; --help lists the
// commands; a word that names none is still refused.
func TestAgentteamAloneOpensTheChat(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "list team\n", "--demo", "--no-auto")
	mustSucceed(t, r, "agentteam --demo")
	if !strings.Contains(r.stdout, "agentteam chat in lines") || !strings.Contains(r.stdout, "- list the team:") {
		t.Fatalf("agentteam --demo did not open the chat:\n%s", r.stdout)
	}
	r = runBin(t, t.TempDir(), nil, "", "--help")
	mustSucceed(t, r, "agentteam --help")
	if !strings.Contains(r.stdout, "Available Commands:") || !strings.Contains(r.stdout, "agentteam alone opens the chat") {
		t.Fatalf("agentteam --help:\n%s", r.stdout)
	}
	r = runBin(t, t.TempDir(), nil, "", "--workspace", ".", "frobnicate")
	if r.code != exit.Usage || !strings.Contains(r.stderr, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
