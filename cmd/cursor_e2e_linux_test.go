package cmd

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// readPositionAttr is the extended attribute of an inbox log that holds
// its read position ("OFFSET MILLIS CHECK").
const readPositionAttr = "user.agentteam.read"

// readPositionPlace is how a sentence names where name's read position is.
func readPositionPlace(name string) string {
	return name + ".jsonl (its extended attribute " + readPositionAttr + ")"
}

// spoilReadPosition puts garbage where name's read position is kept.
func spoilReadPosition(t *testing.T, ws, name string) {
	t.Helper()
	if err := unix.Setxattr(state(ws, "inbox", name+".jsonl"), readPositionAttr, []byte("this is not a read position"), 0); err != nil {
		t.Fatal(err)
	}
}

// toOldLayout lays every inbox of ws out as the version before this one
// did: the read position in NAME.cursor (a 128-byte record with its
// check) instead of on the log, and a NAME.jsonl.lock beside each log.
func toOldLayout(t *testing.T, ws string) {
	t.Helper()
	logs, err := filepath.Glob(state(ws, "inbox", "*.jsonl"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("inboxes: %v %v", logs, err)
	}
	for _, log := range logs {
		if err := os.WriteFile(log+".lock", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := unix.Getxattr(log, readPositionAttr, buf)
		if err == unix.ENODATA {
			continue // never committed: no position, as before
		}
		if err != nil {
			t.Fatal(err)
		}
		off, err := strconv.ParseInt(strings.Fields(string(buf[:n]))[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Truncate(time.Millisecond)
		check := fmt.Sprintf("%08x", crc32.ChecksumIEEE(fmt.Appendf(nil, "%d/%d", off, at.UnixMilli())))
		rec := fmt.Sprintf(`{"offset":%d,"updatedAt":%q,"check":%q}`, off, at.Format(time.RFC3339Nano), check)
		rec += strings.Repeat(" ", 127-len(rec)) + "\n"
		if err := os.WriteFile(strings.TrimSuffix(log, ".jsonl")+".cursor", []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Removexattr(log, readPositionAttr); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOldLayoutWorkspaceResumes: a workspace whose inboxes are laid out as
// the version before did (NAME.cursor and NAME.jsonl.lock beside each log)
// resumes: the read positions are honoured (only the new message is
// unread), carried over onto the logs, and every message is in its
// reader's conversation exactly once.
func TestOldLayoutWorkspaceResumes(t *testing.T) {
	ws := t.TempDir()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser"}`)}}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} }))
	defer srv.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv), "", "run", "build a parser"), "first run")
	toOldLayout(t, ws)
	if r := runBin(t, ws, nil, "", "send", "--to", "alice", "also handle empty input"); r.code != 0 {
		t.Fatalf("send: %s", r.stderr)
	}
	store := inbox.NewStore(state(ws, "inbox"))
	if st, err := store.Stats(t.Context(), "alice"); err != nil || st.Unread != 1 || st.Broken != "" {
		t.Fatalf("alice's inbox in the old layout: %+v, %v; want the new message alone unread", st, err)
	}

	srv2 := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": handled"} })
	defer srv2.Close()
	mustSucceed(t, runBin(t, ws, fakeEnv(srv2), "", "run", "--resume", "go on"), "run --resume")
	noViolations(t, srv2)
	got := 0
	for _, req := range srv2.Requests("alice") {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "also handle empty input") {
				got++
			}
		}
	}
	if got == 0 {
		t.Fatal("alice never got the message sent to the old layout")
	}
	for _, name := range []string{"lead", "alice"} {
		assertEachMessageOnce(t, ws, name)
	}
	if _, err := os.Lstat(state(ws, "inbox", "alice.cursor")); !os.IsNotExist(err) {
		t.Errorf("alice.cursor was not carried over: %v", err)
	}
	if _, err := unix.Getxattr(state(ws, "inbox", "alice.jsonl"), readPositionAttr, make([]byte, 64)); err != nil {
		t.Errorf("alice's log has no read position after the resume: %v", err)
	}
}
