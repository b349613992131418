package tools

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentteam/agentteam/internal/sys/sandbox"
)

// TestMain makes the test binary the sandbox's init when bash re-executes
// it, and keeps the records of whose workspaces are whose out of the real
// state directory.
func TestMain(m *testing.M) {
	sandbox.Init()
	dir, err := os.MkdirTemp("", "agentteam-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
