package tui

import (
	"fmt"
	"os"
	"testing"
)

// TestMain records whose workspaces are whose (team.Open claims each test's
// .agentteam/) in a temporary state directory, not the developer's.
func TestMain(m *testing.M) {
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
