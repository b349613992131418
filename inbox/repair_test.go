package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// repairs records what a Store's OnRepair was told.
type repairs struct {
	mu   sync.Mutex
	errs []error
}

func (r *repairs) add(name string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *repairs) list() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func newRepairStore(t *testing.T) (*Store, *repairs) {
	t.Helper()
	r := &repairs{}
	st := NewStoreWithOptions(filepath.Join(t.TempDir(), "inbox"), StoreOptions{OnRepair: r.add})
	t.Cleanup(func() { st.Close() })
	return st, r
}

// newFileCursorRepairStore is newRepairStore keeping positions in files.
func newFileCursorRepairStore(t *testing.T) (*Store, *repairs) {
	t.Helper()
	st, r := newRepairStore(t)
	st.positions.fileCursors = true
	return st, r
}

// setAttr sets the read position attribute of name's log to value.
func setAttr(t *testing.T, st *Store, name, value string) {
	t.Helper()
	h, err := statefile.HoldLog(st.Path(name), false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock()
	if err := h.SetAttr(posAttr, []byte(value)); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("no extended attributes here: %v", err)
		}
		t.Fatal(err)
	}
}

// setAside lists the files a repair kept beside the read position.
func setAside(t *testing.T, st *Store, name string) []string {
	t.Helper()
	found, err := filepath.Glob(st.positions.cursorPath(name) + ".corrupt-*")
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// A read position that cannot be read is set aside and rebuilt from 0 under
// the lock: the messages arrive (again) through ReadUnread and Commit rather
// than never, the bad file is kept, and the person is told through OnRepair.
// Before the repair, HasUnread says there is something to deliver and Stats
// reports the inbox broken, changing nothing.
func TestCorruptCursorIsSetAsideAndMessagesArrive(t *testing.T) {
	t.Run("file", corruptCursorFileIsSetAside)
	attrs := []struct{ name, value, says string }{
		{"garbage", "not a read position at all", "is corrupt"},
		{"wrong check", string(encodePos(5, time.Now())[:len(encodePos(5, time.Now()))-1]) + "x", "is corrupt"},
		{"negative", "-1 0 " + cursorCheck(-1, time.UnixMilli(0)), "is corrupt"},
		{"too long", strings.Repeat("7", 4*maxPosAttr), "is corrupt: it is longer than"},
	}
	for _, tc := range attrs {
		t.Run("attribute "+tc.name, func(t *testing.T) {
			corruptPositionIsSetAside(t, newRepairStore, func(st *Store) string { return attrPlace(st.Path("alice")) }, func(t *testing.T, st *Store) {
				setAttr(t, st, "alice", tc.value)
			}, tc.says, false)
		})
	}
}

// corruptPositionIsSetAside is the body of the tests above: place(log) is
// where the position is, as the sentences name it; spoil breaks it.
func corruptPositionIsSetAside(t *testing.T, newStore func(*testing.T) (*Store, *repairs),
	place func(*Store) string, spoil func(*testing.T, *Store), says string, isDir bool) {
	st, rep := newStore(t)
	mustAppend(t, st, "alice", "one")
	if err := st.Commit(t.Context(), "alice", mustRead(t, st, "alice")); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "alice", "two")
	path := place(st)
	spoil(t, st)

	if has, err := st.HasUnread(t.Context(), "alice"); err != nil || !has {
		t.Errorf("HasUnread = %v, %v; want true: there is something to deliver", has, err)
	}
	stats, err := st.Stats(t.Context(), "alice")
	if err != nil || !strings.Contains(stats.Broken, path+" "+says) || stats.Total != 2 || stats.Unread != 2 {
		t.Errorf("Stats = %+v, %v; want broken (%s %s), 2 of 2 unread", stats, err, path, says)
	}
	if len(setAside(t, st, "alice")) != 0 || len(rep.list()) != 0 {
		t.Fatal("Stats repaired: read-only calls must not change anything")
	}

	b, err := st.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatalf("ReadUnread with a corrupt read position: %v", err)
	}
	assertContents(t, b, "one", "two") // delivered again, never lost
	if err := st.Commit(t.Context(), "alice", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "alice"); !b.Empty() {
		t.Errorf("unread after commit: %q", contents(b))
	}
	if stats, _ := st.Stats(t.Context(), "alice"); stats.Broken != "" || stats.Unread != 0 {
		t.Errorf("Stats after the repair = %+v", stats)
	}

	aside := setAside(t, st, "alice")
	if len(aside) != 1 {
		t.Fatalf("set aside: %v, want one file", aside)
	}
	if fi, err := os.Lstat(aside[0]); err != nil || fi.IsDir() != isDir {
		t.Errorf("the bad read position was not kept: %v %v", fi, err)
	}
	errs := rep.list()
	if len(errs) != 1 {
		t.Fatalf("OnRepair told %d times, want once: %v", len(errs), errs)
	}
	msg := errs[0].Error()
	if !errors.Is(errs[0], ErrCorruptCursor) || !strings.Contains(msg, path+" "+says) ||
		!strings.Contains(msg, aside[0]) {
		t.Errorf("OnRepair told %q, want it to say %s %s and name %s", msg, path, says, aside[0])
	}
}

func corruptCursorFileIsSetAside(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, path string, good []byte)
		says  string
		isDir bool
	}{
		{"garbage", func(t *testing.T, path string, _ []byte) {
			writeFile(t, path, "not a read position at all\n")
		}, "is corrupt", false},
		{"truncated record", func(t *testing.T, path string, good []byte) {
			writeFile(t, path, string(good[:len(good)/3]))
		}, "is corrupt", false},
		{"directory", func(t *testing.T, path string, _ []byte) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			corruptPositionIsSetAside(t, newFileCursorRepairStore, func(st *Store) string { return st.positions.cursorPath("alice") }, func(t *testing.T, st *Store) {
				path := st.positions.cursorPath("alice")
				good, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				tc.spoil(t, path, good)
			}, tc.says, tc.isDir)
		})
	}
}

// Commit under the lock repairs as well: a read position broken between a
// read and its commit does not stop the commit.
func TestCommitRepairsACorruptCursor(t *testing.T) {
	spoil := map[string]func(*testing.T, *Store){
		"file":      func(t *testing.T, st *Store) { writeFile(t, st.positions.cursorPath("alice"), "{garbage") },
		"attribute": func(t *testing.T, st *Store) { setAttr(t, st, "alice", "{garbage") },
	}
	for what, spoil := range spoil {
		t.Run(what, func(t *testing.T) {
			st, rep := newRepairStore(t)
			st.positions.fileCursors = what == "file"
			mustAppend(t, st, "alice", "one")
			b := mustRead(t, st, "alice")
			spoil(t, st)
			if err := st.Commit(t.Context(), "alice", b); err != nil {
				t.Fatalf("Commit with a corrupt read position: %v", err)
			}
			if got := mustRead(t, st, "alice"); !got.Empty() {
				t.Errorf("unread after commit: %q", contents(got))
			}
			if len(rep.list()) != 1 || len(setAside(t, st, "alice")) != 1 {
				t.Errorf("repairs %v, set aside %v", rep.list(), setAside(t, st, "alice"))
			}
		})
	}
}

// A reader without the lock that sees a record torn by a write under way
// reads again, and finally under the lock: never a repair, never an error.
func TestTornCursorIsNotMistakenForCorruption(t *testing.T) {
	st, rep := newFileCursorRepairStore(t)
	mustAppend(t, st, "alice", "one")
	first := mustRead(t, st, "alice")
	mustAppend(t, st, "alice", "two")
	good, err := encodeCursor(first.Pos.(filePos).next, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	torn := append(append([]byte(nil), good[:40]...), []byte(strings.Repeat("#", len(good)-40))...)

	// A writer mid-commit: it holds the lock while the record is torn.
	h, err := statefile.HoldLog(st.Path("alice"), false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, st.positions.cursorPath("alice"), string(torn))
	type result struct {
		b   Batch
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := st.ReadUnread(t.Context(), "alice")
		done <- result{b, err}
	}()
	time.Sleep(50 * time.Millisecond) // the reader's quick retries see the torn record
	writeFile(t, st.positions.cursorPath("alice"), string(good))
	h.Unlock()

	r := <-done
	if r.err != nil {
		t.Fatalf("ReadUnread during a commit: %v", r.err)
	}
	assertContents(t, r.b, "two")
	if len(rep.list()) != 0 || len(setAside(t, st, "alice")) != 0 {
		t.Errorf("a torn record was taken for a corrupt one: %v", rep.list())
	}
}

// A read position that is a symbolic link (to ~/.bashrc, or to a file not
// there yet) is set aside like a corrupt one: the link is moved, never
// followed, so the file outside stays as it was and none is created.
func TestSymlinkedCursorIsSetAsideNotFollowed(t *testing.T) {
	t.Run("file", func(t *testing.T) { symlinkedCursorIsSetAside(t, true) })
	// An earlier version's NAME.cursor that is a link, on a file system
	// with attributes: set aside as well, and the position goes on the log.
	t.Run("attribute", func(t *testing.T) { needAttrs(t); symlinkedCursorIsSetAside(t, false) })
}

func symlinkedCursorIsSetAside(t *testing.T, fileCursors bool) {
	st, rep := newRepairStore(t)
	st.positions.fileCursors = fileCursors
	outside, unchanged := outsideFile(t)
	dangling := filepath.Join(t.TempDir(), "created-outside")
	for _, target := range []string{outside, dangling} {
		mustAppend(t, st, "alice", "hi")
		if !fileCursors {
			// No attribute yet, so the old file is the position.
			h, err := statefile.HoldLog(st.Path("alice"), false)
			if err != nil {
				t.Fatal(err)
			}
			err = h.RemoveAttr(posAttr)
			h.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
		symlink(t, target, st.positions.cursorPath("alice"))
		if has, err := st.HasUnread(t.Context(), "alice"); err != nil || !has {
			t.Errorf("HasUnread = %v, %v", has, err)
		}
		b, err := st.ReadUnread(t.Context(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(t.Context(), "alice", b); err != nil {
			t.Fatal(err)
		}
		errs := rep.list()
		want := st.positions.cursorPath("alice") + " is a symbolic link"
		if len(errs) == 0 || !strings.Contains(errs[len(errs)-1].Error(), want) {
			t.Errorf("OnRepair told %v, want %q", errs, want)
		}
		if fileCursors {
			if fi, err := os.Lstat(st.positions.cursorPath("alice")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("read position after the repair: %v %v", fi, err)
			}
			if err := os.Remove(st.positions.cursorPath("alice")); err != nil {
				t.Fatal(err)
			}
		} else {
			if _, err := os.Lstat(st.positions.cursorPath("alice")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the link is still there after the repair: %v", err)
			}
			if off, ok := positionAttr(t, st, "alice"); !ok || off != b.Pos.(filePos).next {
				t.Errorf("position on the log %d (ok %v), want %d", off, ok, b.Pos.(filePos).next)
			}
		}
	}
	unchanged()
	if _, err := os.Lstat(dangling); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a commit created %s through the link: %v", dangling, err)
	}
	if n := len(rep.list()); n != 2 {
		t.Errorf("OnRepair told %d times, want 2", n)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
