package inbox

import (
	"testing"
)

// A Mark changes with every append and every commit (which touches
// neither the log's size nor its modification time), and not otherwise.
func TestMarkFollowsAppendsAndCommits(t *testing.T) {
	for _, fileCursors := range []bool{false, true} {
		st := newTestStore(t)
		st.positions.fileCursors = fileCursors
		mark := func() Mark {
			t.Helper()
			m, err := st.Mark(t.Context(), "bob")
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if m := mark(); m != (Mark{}) {
			t.Errorf("Mark of a missing inbox = %+v", m)
		}
		mustAppend(t, st, "bob", "one")
		m1 := mark()
		if m1 == (Mark{}) || mark() != m1 {
			t.Fatalf("Mark after an append %+v, then %+v", m1, mark())
		}
		if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
			t.Fatal(err)
		}
		m2 := mark()
		if m2 == m1 || m2.Position != m2.Size {
			t.Errorf("fileCursors %v: Mark after a commit %+v, before %+v", fileCursors, m2, m1)
		}
		mustAppend(t, st, "bob", "two")
		if m3 := mark(); m3 == m2 || m3.Position != m2.Position {
			t.Errorf("fileCursors %v: Mark after an append %+v, before %+v", fileCursors, m3, m2)
		}
	}
}

// A read position that cannot be trusted marks as -1.
func TestMarkOfACorruptPosition(t *testing.T) {
	st, _ := newRepairStore(t)
	mustAppend(t, st, "bob", "one")
	setAttr(t, st, "bob", "garbage")
	if m, err := st.Mark(t.Context(), "bob"); err != nil || m.Position != -1 {
		t.Errorf("Mark = %+v, %v; want position -1", m, err)
	}
}
