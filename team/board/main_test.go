package board

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary act as a task claimer in a child process
// (see TestClaimRaceGoroutinesAndProcesses).
func TestMain(m *testing.M) {
	if os.Getenv(envTaskClaimer) != "" {
		if err := claimFromEnv(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
