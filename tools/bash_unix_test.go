//go:build unix

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The timeout must kill the shell's background children too, not only the shell.
func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.BashTimeout = 500 * time.Millisecond
	r := runBounded(t, context.Background(), env, "sleep 30 & echo $! > bg.pid; sleep 30")
	mustErr(t, r, "timed out")
	b, err := os.ReadFile(filepath.Join(env.Workspace.Root, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// SIGKILL is delivered asynchronously; allow a generous moment for the kernel.
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("the background child %d to end after the timeout", pid),
		func() bool { return !alive(pid) })
}

// alive treats a zombie as dead: it has exited and only waits to be reaped.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc here: kill(pid, 0) is all we know
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
