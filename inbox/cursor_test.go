package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A commit keeps the read position on the log itself: no file is made
// beside it (no lock file, no read position), the log stays the same file,
// and the position is the new one.
func TestCommitKeepsThePositionOnTheLog(t *testing.T) {
	needAttrs(t)
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	fi1, err := os.Stat(st.Path("bob"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"two", "three"} {
		if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, st, "bob", c)
	}
	b := mustRead(t, st, "bob")
	assertContents(t, b, "three")
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(st.Path("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if off, ok := positionAttr(t, st, "bob"); !ok || off != fi2.Size() {
		t.Errorf("read position %d (ok %v), want %d", off, ok, fi2.Size())
	}
	if !os.SameFile(fi1, fi2) {
		t.Error("the log was replaced by a commit")
	}
	entries, err := os.ReadDir(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "bob.jsonl" {
			t.Errorf("%s was made beside the log", e.Name())
		}
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
}

// Where positions are kept in NAME.cursor files, a commit rewrites the
// file in place: the same file, the same length, a new modification time.
func TestCommitWritesTheCursorFileInPlace(t *testing.T) {
	st := newFileCursorStore(t)
	mustAppend(t, st, "bob", "one")
	if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
		t.Fatal(err)
	}
	fi1, err := os.Stat(st.positions.cursorPath("bob"))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "bob", "two")
	if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(st.positions.cursorPath("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi1, fi2) || fi2.Size() != cursorRecordLen {
		t.Errorf("cursor was replaced or resized: same file %v, %d bytes", os.SameFile(fi1, fi2), fi2.Size())
	}
	if !fi2.ModTime().After(fi1.ModTime()) {
		t.Errorf("second commit kept the modification time %v", fi1.ModTime())
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
}

// oldWorkspace lays bob's inbox out as the version before this one did:
// the log with "one" and "two", its lock file, and a read position file
// (rec: the record for the offset just after "one") beside it.
func oldWorkspace(t *testing.T, rec func(offset int64) []byte) *Store {
	t.Helper()
	st := newFileCursorStore(t)
	mustAppend(t, st, "bob", "one")
	first := mustRead(t, st, "bob").Pos.(filePos).next
	mustAppend(t, st, "bob", "two")
	writeFile(t, st.Path("bob")+".lock", "")
	writeFile(t, st.positions.cursorPath("bob"), string(rec(first)))
	return NewStore(st.Dir())
}

// A workspace written by the version before keeps working: its read
// position file is read (by readers with and without the lock), and the
// first commit carries it over onto the log and removes the file; a new
// store (another process) then reads on from there.
func TestOldLayoutPositionIsCarriedOver(t *testing.T) {
	needAttrs(t)
	records := map[string]func(int64) []byte{
		"record": func(off int64) []byte {
			rec, err := encodeCursor(off, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return rec
		},
		"earlier JSON": func(off int64) []byte {
			return fmt.Appendf(nil, `{"offset":%d,"updatedAt":"2026-01-02T03:04:05.678Z"}`+"\n", off)
		},
	}
	for what, rec := range records {
		t.Run(what, func(t *testing.T) {
			st := oldWorkspace(t, rec)
			if has, err := st.HasUnread(t.Context(), "bob"); err != nil || !has {
				t.Errorf("HasUnread = %v, %v", has, err)
			}
			if s, err := st.Stats(t.Context(), "bob"); err != nil || s != (Stats{Total: 2, Unread: 1}) {
				t.Errorf("Stats = %+v, %v; want 1 of 2 unread", s, err)
			}
			b := mustRead(t, st, "bob")
			assertContents(t, b, "two")
			if err := st.Commit(t.Context(), "bob", b); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(st.positions.cursorPath("bob")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the old read position file is still there: %v", err)
			}
			if off, ok := positionAttr(t, st, "bob"); !ok || off != b.Pos.(filePos).next {
				t.Errorf("carried-over position %d (ok %v), want %d", off, ok, b.Pos.(filePos).next)
			}
			again := NewStore(st.Dir())
			if b := mustRead(t, again, "bob"); !b.Empty() {
				t.Errorf("unread after the carry-over: %q", contents(b))
			}
			mustAppend(t, again, "bob", "three")
			assertContents(t, mustRead(t, again, "bob"), "three")
		})
	}
}

// A read position written by an earlier version (JSON, no check, any
// length) is honoured, and where positions stay in files, replaced whole by
// the first commit.
func TestOldCursorFileIsReadAndUpgraded(t *testing.T) {
	st := newFileCursorStore(t)
	mustAppend(t, st, "bob", "one")
	first := mustRead(t, st, "bob")
	old := fmt.Sprintf(`{"offset":%d,"updatedAt":"2026-01-02T03:04:05.678Z"}`+"\n", first.Pos.(filePos).next)
	if err := os.WriteFile(st.positions.cursorPath("bob"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "bob", "two")
	b := mustRead(t, st, "bob")
	assertContents(t, b, "two")
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(st.positions.cursorPath("bob"))
	if off, ok := parseCursor(data); !ok || off != b.Pos.(filePos).next || len(data) != cursorRecordLen {
		t.Errorf("cursor after commit = %q", data)
	}
}

func TestCursorRecords(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)
	rec, err := encodeCursor(4711, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != cursorRecordLen || rec[len(rec)-1] != '\n' {
		t.Fatalf("record %q is not %d bytes ending in a newline", rec, cursorRecordLen)
	}
	torn := strings.Replace(string(rec), "4711", "4712", 1) // half of a rewrite from 4711 to 5712, say
	cases := []struct {
		name string
		data string
		want int64
		ok   bool
	}{
		{"record", string(rec), 4711, true},
		{"empty: being made", "", 0, true},
		{"earlier version", `{"offset":12,"updatedAt":"2026-01-02T03:04:05Z"}`, 12, true},
		{"torn", torn, 0, false},
		{"cut short", string(rec[:40]), 0, false},
		{"negative", `{"offset":-1}`, 0, false},
	}
	for _, c := range cases {
		if off, ok := parseCursor([]byte(c.data)); off != c.want || ok != c.ok {
			t.Errorf("%s: parseCursor = %d, %v; want %d, %v", c.name, off, ok, c.want, c.ok)
		}
	}
}

// A corrupt cursor is never silent; it is reported (OnRepair), no longer
// returned as an error that callers dropped, so the message never arrived.
// repair_test.go covers the repair itself.
func TestCorruptCursorIsReported(t *testing.T) {
	st, rep := newRepairStore(t)
	mustAppend(t, st, "bob", "one")
	if err := os.WriteFile(st.positions.cursorPath("bob"), []byte("{nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := st.ReadUnread(t.Context(), "bob"); err != nil || len(b.Messages) != 1 {
		t.Errorf("ReadUnread of a corrupt cursor: %v, %v", contents(b), err)
	}
	if errs := rep.list(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "corrupt") {
		t.Errorf("repairs reported: %v", errs)
	}
	if err := os.WriteFile(st.positions.cursorPath("bob"), []byte("{nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(t.Context(), "bob", Batch{Pos: filePos{base: 0, start: 0, next: 5}}); err != nil {
		t.Errorf("Commit over a corrupt cursor: %v", err)
	}
	if errs := rep.list(); len(errs) != 2 || !strings.Contains(errs[1].Error(), "corrupt") {
		t.Errorf("repairs reported: %v", errs)
	}
}

// Readers without the lock, as `agentteam inbox` and the watchers are, see
// only positions that were committed, never a mix of two records.
func TestCursorReadersSeeOnlyCommittedPositions(t *testing.T) {
	t.Run("attribute", func(t *testing.T) { readersSeeOnlyCommitted(t, newTestStore(t)) })
	t.Run("file", func(t *testing.T) { readersSeeOnlyCommitted(t, newFileCursorStore(t)) })
}

func readersSeeOnlyCommitted(t *testing.T, st *Store) {
	const n = 300
	committed := sync.Map{}
	committed.Store(int64(0), true)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			last := int64(0)
			for {
				select {
				case <-done:
					return
				default:
				}
				off, _, err := st.positions.read("bob", pathAttr(st.Path("bob")), false)
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok := committed.Load(off); !ok || off < last {
					t.Errorf("a reader saw position %d (last %d), never committed in that order", off, last)
					return
				}
				last = off
			}
		})
	}
	for i := range n {
		mustAppend(t, st, "bob", strings.Repeat("x", i%50))
		b := mustRead(t, st, "bob")
		committed.Store(b.Pos.(filePos).next, true)
		if err := st.Commit(t.Context(), "bob", b); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}
