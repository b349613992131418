package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// State an earlier agentteam made (no id) is adopted when an inbox log
// carries a read position in its extended attribute, which no clone has.
func TestEarlierAgentteamsStateIsAdopted(t *testing.T) {
	ws := openTemp(t)
	log := filepath.Join(ws.InboxDir(), "lead.jsonl")
	writeFile(t, log, `{"from":"user","content":"hi"}`+"\n")
	var fe *ForeignError
	if err := ws.CheckState(); !errors.As(err, &fe) {
		t.Fatalf("CheckState without a read position = %v, want a ForeignError", err)
	}
	if err := unix.Setxattr(log, readPosAttr, []byte("31 1764633600000 abcd1234"), 0); err != nil {
		t.Skipf("this file system keeps no extended attributes: %v", err)
	}
	if err := ws.CheckState(); err != nil {
		t.Fatalf("CheckState of an earlier agentteam's state: %v", err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws.StatePath(), "id")); err != nil {
		t.Fatalf("Init did not record the adopted state: %v", err)
	}
}
