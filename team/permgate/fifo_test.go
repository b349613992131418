//go:build unix

package permgate

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/tools"
)

// What the person would be asked of a write to a FIFO names the FIFO, and
// making the diff does not wait for a writer.
func TestWhatAPersonIsAskedOfAFIFONamesIt(t *testing.T) {
	// What the person would be asked names the FIFO.
	ws := testWorkspace(t, nil)
	fifo := filepath.Join(ws.Root, "notes")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var ok bool
	c := testkit.BoundedOnFIFO(t, fifo, func() (c classified) {
		c, ok = classify(ws, ws.Root, tools.WriteFileName, []byte(`{"path":"notes","content":"x"}`))
		return c
	})
	if !ok || c.diff != "(notes: not shown, it is a named pipe (FIFO), not a regular file)" {
		t.Errorf("classified %+v (%v), diff %q", c.Call, ok, c.diff)
	}
}
