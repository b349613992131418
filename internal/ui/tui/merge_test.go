package tui

import (
	"errors"
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestMergeCommand(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.enter("/merge bob")
	if !slices.Equal(hs.eng.merges, []string{"bob"}) {
		t.Fatalf("merges %v", hs.eng.merges)
	}
	hs.mustSee("Merged agentteam/bob into main: 1 file changed.")

	hs.enter("/merge")
	hs.mustSee("usage: /merge name")
	hs.enter("/merge bob carol")
	if len(hs.eng.merges) != 1 {
		t.Fatalf("a bad /merge reached the engine: %v", hs.eng.merges)
	}

	hs.eng.err = errors.New("Merging agentteam/bob into main conflicts in notes.txt.")
	hs.enter("/merge bob")
	hs.mustSee("! Merging agentteam/bob into main conflicts in notes.txt.")
}

// The team panel shows a worktree teammate's branch and its change.
func TestTeamPanelShowsTheBranchAndItsDiffstat(t *testing.T) {
	hs := newHarness(t, 160, 30, Options{HasModel: true})
	snap := members("alice:idle", "bob:idle", "carol:working")
	snap.Config.Teammates[0].Branch, snap.Config.Teammates[0].Diffstat = "agentteam/alice", "2 files changed, 3 insertions(+), 1 deletion(-)"
	snap.Config.Teammates[1].Branch, snap.Config.Teammates[1].Merged = "agentteam/bob", true
	hs.send(snap)
	hs.mustSee("alice tester idle · branch +3 -1 (2 files)", "bob tester idle · branch merged")
}

// /diff shows a teammate's change; focused on a teammate, /diff alone is its.
func TestDiffCommandShowsTheFocusedTeammatesChange(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.send(members("alice:idle", "bob:idle"))
	hs.enter("/diff")
	hs.mustSee("usage: /diff name (or focus a teammate and /diff)")
	hs.enter("/diff bob")
	hs.mustSee("+TWO by bob")
	hs.key(tea.KeyTab) // focus alice
	hs.enter("/diff")
	if !slices.Equal(hs.eng.diffs, []string{"bob", "alice"}) {
		t.Fatalf("diffs %v", hs.eng.diffs)
	}
	hs.mustSee("+TWO by alice")
}
