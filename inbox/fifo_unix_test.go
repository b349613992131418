//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package inbox

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// A FIFO at an inbox's path is refused in a sentence, never waited on:
// neither an append (which would block until a reader came) nor a read.
func TestFIFOInboxIsRefused(t *testing.T) {
	st := newTestStore(t)
	if err := os.MkdirAll(st.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(st.Path("alice"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	wantRefused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, statefile.ErrNotRegular) || !strings.Contains(err.Error(), st.Path("alice")) {
			t.Errorf("%s of a FIFO inbox: %v, want a refusal naming it", what, err)
		}
	}
	_, err := st.Append(t.Context(), "alice", testMsg("hi"))
	wantRefused("Append", err)
	_, err = st.ReadUnread(t.Context(), "alice")
	wantRefused("ReadUnread", err)
	_, _, err = st.ReadAll(t.Context(), "alice")
	wantRefused("ReadAll", err)
	_, err = st.HasUnread(t.Context(), "alice")
	wantRefused("HasUnread", err)
	if s, err := st.Stats(t.Context(), "alice"); err != nil || !strings.Contains(s.Broken, "not a regular file") {
		t.Errorf("Stats = %+v, %v; want it broken", s, err)
	}
	wantRefused("Commit", st.Commit(t.Context(), "alice", Batch{Pos: filePos{next: 5}}))
}
