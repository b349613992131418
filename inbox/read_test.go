package inbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

func newTestStore(t *testing.T) *Store {
	t.Helper()
	return NewStore(filepath.Join(t.TempDir(), "inbox")) // not created yet, on purpose
}

// newFileCursorStore keeps read positions in NAME.cursor files, as on a
// file system without extended attributes.
func newFileCursorStore(t *testing.T) *Store {
	t.Helper()
	st := newTestStore(t)
	st.positions.fileCursors = true
	return st
}

// needAttrs skips a test of read positions kept on the logs where they
// are kept in NAME.cursor files instead (off Linux).
func needAttrs(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("read positions are NAME.cursor files here")
	}
}

// positionAttr is the read position kept on name's log, and whether it
// parses.
func positionAttr(t *testing.T, st *Store, name string) (int64, bool) {
	t.Helper()
	var buf [maxPosAttr]byte
	n, err := statefile.LinkAttr(st.Path(name), posAttr, buf[:])
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no extended attributes here: %v", err)
	}
	if err != nil {
		t.Fatalf("the read position attribute of %s: %v", name, err)
	}
	return parsePos(buf[:n])
}

func mustAppend(t *testing.T, st *Store, name, c string) Message {
	t.Helper()
	m, err := st.Append(t.Context(), name, testMsg(c))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rawAppend(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, st *Store, name string) Batch {
	t.Helper()
	b, err := st.ReadUnread(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func contents(b Batch) []string {
	var out []string
	for _, m := range b.Messages {
		out = append(out, m.Content)
	}
	return out
}

func assertContents(t *testing.T, b Batch, want ...string) {
	t.Helper()
	if got := contents(b); !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

func TestAppendFillsFields(t *testing.T) {
	st := newTestStore(t)
	before := time.Now().UTC().Truncate(time.Millisecond)
	m := mustAppend(t, st, "bob", "hi")
	id, err := uuid.Parse(m.ID)
	if err != nil || id.Version() != 7 {
		t.Errorf("ID %q is not a UUIDv7 (%v)", m.ID, err)
	}
	if m.To != "bob" || m.Timestamp.Location() != time.UTC || m.Timestamp.Before(before) ||
		!m.Timestamp.Equal(m.Timestamp.Truncate(time.Millisecond)) {
		t.Errorf("filled message = %+v", m)
	}
	given := Message{ID: "x1", Type: TypeResult, From: "alice", To: "lead", Content: "c",
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), CorrelationID: "r1", TaskID: "t1"}
	got, err := st.Append(t.Context(), "bob", given)
	if err != nil || !reflect.DeepEqual(got, given) {
		t.Errorf("Append kept %+v, %v; want %+v", got, err, given)
	}
	b := mustRead(t, st, "bob")
	if len(b.Messages) != 2 || !reflect.DeepEqual(b.Messages[0], m) || !reflect.DeepEqual(b.Messages[1], given) {
		t.Errorf("read back %+v", b.Messages)
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name, inbox string
		msg         Message
		want        error
	}{
		{"content too large", "bob", testMsg(strings.Repeat("x", MaxContentBytes+1)), ErrTooLarge},
		{"line too large", "bob", Message{Type: "t", From: "a", Payload: json.RawMessage(`"` + strings.Repeat("y", maxLineBytes) + `"`)}, ErrTooLarge},
		{"empty type", "bob", Message{From: "a", Content: "c"}, ErrInvalid},
		{"empty from", "bob", Message{Type: TypeMessage, Content: "c"}, ErrInvalid},
		{"empty name", "", testMsg("c"), ErrInvalid},
		{"name with slash", "../bob", testMsg("c"), ErrInvalid},
		{"dot dot", "..", testMsg("c"), ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newTestStore(t)
			if _, err := st.Append(t.Context(), tt.inbox, tt.msg); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if _, err := os.Stat(st.Dir()); !os.IsNotExist(err) {
				t.Errorf("refused Append touched the disk: %v", err)
			}
		})
	}
	st := newTestStore(t)
	if _, err := st.Append(t.Context(), "bob", testMsg(strings.Repeat("x", MaxContentBytes))); err != nil {
		t.Errorf("content of exactly MaxContentBytes refused: %v", err)
	}
}

func TestContentRoundTrips(t *testing.T) {
	st := newTestStore(t)
	c := "héllo\nworld\r\n\t\"quoted\" \\ <b>&amp;</b> 🎉 \u2028 \x00 日本語"
	payload := json.RawMessage("{\n  \"a\": [1, 2],\n  \"s\": \"x\\ny\"\n}")
	m, err := st.Append(t.Context(), "bob", Message{Type: "task_request", From: "lead", Content: c, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, st, "bob")
	if len(b.Messages) != 1 || b.Messages[0].Content != c {
		t.Fatalf("content did not round-trip: %+v", b.Messages)
	}
	if got := string(b.Messages[0].Payload); got != `{"a":[1,2],"s":"x\ny"}` {
		t.Errorf("payload = %s", got)
	}
	if b.Messages[0].ID != m.ID {
		t.Errorf("id changed")
	}
	checkLines(t, st.Path("bob"), 1)
}

func TestReadUnreadChangesNothing(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	mustAppend(t, st, "bob", "two")
	b1, b2 := mustRead(t, st, "bob"), mustRead(t, st, "bob")
	if !reflect.DeepEqual(b1, b2) {
		t.Errorf("two reads differ: %+v vs %+v", b1, b2)
	}
	assertContents(t, b1, "one", "two")
	if _, err := os.Stat(st.positions.cursorPath("bob")); !os.IsNotExist(err) {
		t.Errorf("ReadUnread wrote a cursor: %v", err)
	}
	if _, _, err := st.ReadAll(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Stats(t.Context(), "bob"); err != nil || s != (Stats{Total: 2, Unread: 2}) {
		t.Errorf("Stats = %+v, %v", s, err)
	}
	assertContents(t, mustRead(t, st, "bob"), "one", "two")
}

func TestCommitNeverMovesBackwards(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	old := mustRead(t, st, "bob")
	mustAppend(t, st, "bob", "two")
	both := mustRead(t, st, "bob")
	assertContents(t, both, "one", "two")
	if err := st.Commit(t.Context(), "bob", both); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(t.Context(), "bob", old); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("after committing an older batch, unread = %q", contents(b))
	}
	mustAppend(t, st, "bob", "three")
	if err := st.Commit(t.Context(), "bob", both); err != nil { // again: still a no-op
		t.Fatal(err)
	}
	b := mustRead(t, st, "bob")
	assertContents(t, b, "three")
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(st.Path("bob"))
	if off, ok := positionAttr(t, st, "bob"); !ok || off != fi.Size() {
		t.Errorf("read position %d (ok %v), want offset %d", off, ok, fi.Size())
	}
	if s, _ := st.Stats(t.Context(), "bob"); s != (Stats{Total: 3}) {
		t.Errorf("Stats = %+v", s)
	}
	if err := st.Commit(t.Context(), "bob", Batch{}); err != nil {
		t.Errorf("zero batch: %v", err)
	}
}

func TestPartialLineWaitsForItsEnd(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "one")
	rawAppend(t, st.Path("bob"), `{"id":"x","type":"message","from":"a","content":"hal`)
	b := mustRead(t, st, "bob")
	assertContents(t, b, "one")
	if len(b.Bad) != 0 {
		t.Errorf("partial line reported bad: %+v", b.Bad)
	}
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("partial line returned: %+v", b)
	}
	rawAppend(t, st.Path("bob"), "f\"}\n")
	assertContents(t, mustRead(t, st, "bob"), "half")
}

func TestCorruptLinesAreReportedAndSkipped(t *testing.T) {
	st := newTestStore(t)
	path := st.Path("bob")
	mustAppend(t, st, "bob", "before")
	fi, _ := os.Stat(path)
	off := fi.Size()
	bads := []struct{ line, reason string }{
		{"not json", "not JSON"},
		{`{"type":"message","from":"a"}`, "missing id"},
		{`{"id":"1","from":"a"}`, "missing id or type"},
		{`[1,2]`, "not JSON"},
		{strings.Repeat("x", 2*MaxContentBytes+64<<10+1), "not JSON"},
		{strings.Repeat("y", maxLineBytes+10), "over the"},
	}
	var offsets []int64
	for _, b := range bads {
		offsets = append(offsets, off)
		rawAppend(t, path, b.line+"\n")
		off += int64(len(b.line) + 1)
	}
	rawAppend(t, path, "\n   \n") // blank lines are skipped silently
	mustAppend(t, st, "bob", "after")

	b := mustRead(t, st, "bob")
	assertContents(t, b, "before", "after")
	if len(b.Bad) != len(bads) {
		t.Fatalf("bad lines = %+v", b.Bad)
	}
	for i, bad := range b.Bad {
		want := bads[i].line[:min(len(bads[i].line), 512)]
		if bad.Offset != offsets[i] || bad.Line != want || !strings.Contains(bad.Reason, bads[i].reason) {
			t.Errorf("bad[%d] = {%d %.40q %q}, want offset %d reason ~%q", i, bad.Offset, bad.Line, bad.Reason, offsets[i], bads[i].reason)
		}
	}
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("after commit: %+v", b)
	}
	msgs, bad, err := st.ReadAll(t.Context(), "bob")
	if err != nil || len(msgs) != 2 || len(bad) != len(bads) {
		t.Errorf("ReadAll kept %d messages, %d bad, %v", len(msgs), len(bad), err)
	}
	if s, _ := st.Stats(t.Context(), "bob"); s != (Stats{Total: 2, Bad: len(bads)}) {
		t.Errorf("Stats = %+v", s)
	}
}

func TestBadLineIsCutOnACharacterBoundary(t *testing.T) {
	st := newTestStore(t)
	mustAppend(t, st, "bob", "x")
	rawAppend(t, st.Path("bob"), "a"+strings.Repeat("é", 400)+"\n")
	b := mustRead(t, st, "bob")
	if len(b.Bad) != 1 || !utf8.ValidString(b.Bad[0].Line) || len(b.Bad[0].Line) != 511 {
		t.Errorf("bad = %+v", b.Bad)
	}
}

func TestMissingInbox(t *testing.T) {
	st := newTestStore(t)
	if names, err := st.Names(t.Context()); err != nil || len(names) != 0 {
		t.Errorf("Names = %v, %v", names, err)
	}
	b, err := st.ReadUnread(t.Context(), "bob")
	if err != nil || !b.Empty() {
		t.Errorf("ReadUnread = %+v, %v", b, err)
	}
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Error(err)
	}
	if msgs, bad, err := st.ReadAll(t.Context(), "bob"); err != nil || msgs != nil || bad != nil {
		t.Errorf("ReadAll = %v %v %v", msgs, bad, err)
	}
	if s, err := st.Stats(t.Context(), "bob"); err != nil || s != (Stats{}) {
		t.Errorf("Stats = %+v, %v", s, err)
	}
	if has, err := st.HasUnread(t.Context(), "bob"); err != nil || has {
		t.Errorf("HasUnread = %v, %v", has, err)
	}
	if _, err := os.Stat(st.Dir()); !os.IsNotExist(err) {
		t.Errorf("reading created the directory: %v", err)
	}
}

func TestNamesAndStats(t *testing.T) {
	st := newTestStore(t)
	for _, n := range []string{"lead", "bob", "alice", "bob"} {
		mustAppend(t, st, n, "hi "+n)
	}
	b := mustRead(t, st, "bob")
	b.Messages = b.Messages[:0] // what is committed is the batch's end, not its slice
	mustAppend(t, st, "bob", "later")
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	// A file planted under a name no agent can have is no inbox.
	for _, planted := range []string{"a.b.jsonl", "x y.jsonl", "-x.jsonl"} {
		if err := os.WriteFile(filepath.Join(st.Dir(), planted), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names, err := st.Names(t.Context())
	if err != nil || !reflect.DeepEqual(names, []string{"alice", "bob", "lead"}) {
		t.Errorf("Names = %v, %v (cursor, lock and planted files must not count)", names, err)
	}
	want := map[string]Stats{"alice": {Total: 1, Unread: 1}, "bob": {Total: 3, Unread: 1}, "lead": {Total: 1, Unread: 1}}
	for n, w := range want {
		if s, err := st.Stats(t.Context(), n); err != nil || s != w {
			t.Errorf("Stats(%s) = %+v, %v; want %+v", n, s, err, w)
		}
		if has, err := st.HasUnread(t.Context(), n); err != nil || !has {
			t.Errorf("HasUnread(%s) = %v, %v", n, has, err)
		}
	}
}

// A log deleted by hand and started again is read from its start.
func TestReplacedLogIsReadFromItsStart(t *testing.T) {
	st := newTestStore(t)
	for _, c := range []string{"one", "two", "three"} {
		mustAppend(t, st, "bob", c)
	}
	if err := st.Commit(t.Context(), "bob", mustRead(t, st, "bob")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(st.Path("bob")); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, "bob", "new")
	if has, _ := st.HasUnread(t.Context(), "bob"); !has {
		t.Error("HasUnread false after the log was replaced")
	}
	if s, _ := st.Stats(t.Context(), "bob"); s != (Stats{Total: 1, Unread: 1}) {
		t.Errorf("Stats = %+v", s)
	}
	b := mustRead(t, st, "bob")
	assertContents(t, b, "new")
	if err := st.Commit(t.Context(), "bob", b); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, st, "bob"); !b.Empty() {
		t.Errorf("after commit: %q", contents(b))
	}
	mustAppend(t, st, "bob", "newer")
	assertContents(t, mustRead(t, st, "bob"), "newer")
}
