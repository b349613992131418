package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// ctrl+r finds the newest history entry holding what is typed, ctrl+r
// again an older one; enter keeps it in the input unsent, esc puts back
// what was there.
func TestCtrlRSearchesTheHistory(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{})
	ctrlR := tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	for _, s := range []string{"go test ./...", "git status", "go vet ./..."} {
		hs.enter(s)
	}
	sent := len(hs.eng.said)
	hs.typeText("draft")
	hs.send(ctrlR)
	hs.typeText("go")
	if v := hs.m.in.value(); v != "go vet ./..." {
		t.Fatalf("ctrl+r go shows %q, want the newest match", v)
	}
	hs.mustSee("history search: go")
	hs.send(ctrlR)
	if v := hs.m.in.value(); v != "go test ./..." {
		t.Fatalf("ctrl+r again shows %q, want the older match", v)
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	if v := hs.m.in.value(); v != "go test ./..." || len(hs.eng.said) != sent {
		t.Fatalf("enter left %q and sent %d more; want the entry kept, nothing sent", v, len(hs.eng.said)-sent)
	}
	hs.m.in.set("another draft")
	hs.send(ctrlR)
	hs.typeText("status")
	if v := hs.m.in.value(); v != "git status" {
		t.Fatalf("ctrl+r status shows %q", v)
	}
	hs.key(tea.KeyEscape)
	if v := hs.m.in.value(); v != "another draft" {
		t.Fatalf("esc left %q, want the draft back", v)
	}
	hs.send(ctrlR)
	hs.typeText("nothing like it")
	hs.mustSee("(nothing found)")
}
