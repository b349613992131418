//go:build linux

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// An AGENTS.md its user cannot read is skipped with one sentence and the
// fallback stands in; root, who can read it, is given it. Run as the
// person and, when that is root, as nobody.
func TestAnUnreadableAgentsMDIsSkippedWithASentence(t *testing.T) {
	for _, who := range sandboxUsers() {
		t.Run(who.name, func(t *testing.T) {
			srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			u := newSandboxUser(t, who.uid)
			agents := filepath.Join(u.ws, "AGENTS.md")
			testWriteFile(t, agents, "LOCKED-RULE\n")
			testWriteFile(t, filepath.Join(u.ws, "CLAUDE.md"), "CLAUDE-RULE\n")
			if err := os.MkdirAll(filepath.Join(u.home, ".config", "agentteam"), 0o755); err != nil {
				t.Fatal(err)
			}
			testWriteFile(t, filepath.Join(u.home, ".config", "agentteam", "config.toml"), "[context]\nfiles = [\"CLAUDE.md\"]\n")
			u.own(t)
			if err := os.Chmod(agents, 0); err != nil {
				t.Fatal(err)
			}
			r := u.run(t, fakeEnv(srv), "run", "--timeout", "30s", "hi")
			mustSucceed(t, r, "run")
			sys := systemOf(t, srv.Requests("lead")[0])
			skipped := agents + " is skipped: it cannot be read (permission denied)."
			if who.uid == 0 {
				if !strings.Contains(sys, "LOCKED-RULE") || strings.Contains(r.stderr, "is skipped") {
					t.Fatalf("root was not given the file it can read:\n%s\n%s", sys, r.stderr)
				}
				return
			}
			if strings.Contains(sys, "LOCKED-RULE") || !strings.Contains(sys, "CLAUDE-RULE") || !strings.Contains(r.stderr, skipped) {
				t.Fatalf("stderr lacks %q or the prompt is wrong:\n%s\n%s", skipped, r.stderr, sys)
			}
		})
	}
}
