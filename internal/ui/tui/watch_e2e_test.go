package tui

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// While a chat in lines runs the team, `agentteam chat` in a terminal
// watches it: the notice says who runs it, the person's line reaches the
// running lead, the teammate it spawns and the lead's answer show, and a
// command only the running chat can do is refused in a sentence.
func TestChatWatchesATeamAnotherProcessRunsInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	owner := exec.Command(bin, "chat", "--demo", "--plain")
	var out syncBuffer
	owner.Dir, owner.Stdout, owner.Stderr = ws, &out, io.Discard
	owner.Env = append(owner.Environ(), "GORACE=atexit_sleep_ms=0")
	in, err := owner.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = owner.Wait() })
	testkit.Eventually(t, 30*time.Second, "the running chat's prompt", func() bool { return strings.Contains(out.String(), "lead> ") })

	s := startTmux(t, ws)
	s.typeLine(bin + " chat")
	s.waitFor("the watch", func(screen string) bool {
		return strings.Contains(screen, "Watching:") && strings.Contains(screen, "runs this team")
	})
	s.typeLine("spawn alice as programmer")
	s.waitFor("alice and the lead's answer", contains("alice", "Here is what I did", "spawn alice as programmer: done"))
	s.typeLine("/spawn bob as tester")
	s.waitFor("the refusal", func(screen string) bool {
		// The sentence wraps where the runner's pid puts it: read it flat.
		flat := strings.Join(strings.Fields(strings.ReplaceAll(screen, "│", " ")), " ")
		return strings.Contains(flat, "this chat only watches it: spawning a teammate is done there")
	})
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell again", func(screen string) bool { return strings.HasSuffix(strings.TrimSpace(screen), prompt) })
}

// syncBuffer is a bytes.Buffer a process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
