//go:build unix

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// A model that edits a FIFO must get a sentence at once, in every
// permission mode: the gate reads the file to show the diff, and a read
// that waits for a writer would hold the run past its --timeout.
func TestEditOfAFIFOEndsAtOnceWithASentence(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"ask", "permission denied: edit_file notes needs approval"},
		{"auto-edit", "notes is a named pipe (FIFO), not a regular file"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv := fakellm.New(permLeadScript(
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("edit_file", `{"path":"notes","old_text":"a","new_text":"b"}`)}},
				fakellm.Reply{Content: "done"},
			), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			fifo := filepath.Join(ws, "notes")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			// A run stuck on the FIFO is let go after 30s, so the test ends.
			start := time.Now()
			wait, _ := startBinWithin(t, 30*time.Second, ws, fakeEnv(srv), "run", "--timeout", "10s", "--permission-mode", tc.mode, "edit the notes")
			r := wait()
			if took := time.Since(start); took > 8*time.Second {
				t.Fatalf("the run took %s (--timeout 10s): it waited on the FIFO", took.Round(time.Second))
			}
			mustSucceed(t, r, "run")
			noViolations(t, srv)
			res := toolResults(t, ws, "lead")
			if len(res) != 1 || !strings.Contains(res[0], tc.want) {
				t.Fatalf("tool results %q, want one saying %q", res, tc.want)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced (err %v)", err)
			}
		})
	}
}
