package panel

import (
	"testing"

	"github.com/agentteam/agentteam/team/registry"
)

// The team panel labels a worktree teammate's branch and its change, and
// nothing for a teammate without one.
func TestTeamPanelShowsTheBranchAndItsDiffstat(t *testing.T) {
	if got := branchLabel(registry.Member{Name: "carol"}); got != "" {
		t.Fatalf("a teammate without a branch is labelled %q", got)
	}
	if got := shortStat("1 file changed, 1 insertion(+)"); got != "+1 -0 (1 file)" {
		t.Fatalf("shortStat = %q", got)
	}
}
