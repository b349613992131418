package tui

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/agentteam/agentteam/internal/ui/tui/draw"
)

// After --resume the status line's tokens are the team's, as `agentteam
// team` counts them: the lead's from before the resume included.
func TestStatusLineTokensAfterAResumeAreTheTeams(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	if out, err := exec.Command(bin, "run", "--demo", "--quiet", "--workspace", ws, "spawn alice as programmer").CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "team", "--workspace", ws).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`total: (\d+) tokens`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("agentteam team:\n%s", out)
	}
	total, _ := strconv.Atoi(string(m[1]))
	s := startTmux(t, ws)
	s.typeLine(bin + " chat --demo --resume")
	s.waitFor("the team's total in the status line", contains("demo · ", " · "+draw.Tokens(total)+" tokens"))
	// Quit and wait: a chat killed with its session would still write in
	// the workspace while the test removes it.
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
