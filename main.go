// Command agentteam runs a lead LLM agent and its teammates, who work
// together through plain files in a workspace.
package main

import (
	"os"
	"runtime/debug"

	"github.com/agentteam/agentteam/cmd"
	"github.com/agentteam/agentteam/internal/sys/sandbox"
)

// gcPercent: a team's live heap is small (a few MB) and turns over fast, so
// at Go's default of 100 the collector ran often enough to take about a
// tenth of a large team's CPU; 300 spends ~15 MB more memory
// instead. GOGC, when set, decides.
const gcPercent = 300

func main() {
	// Started as a command's sandbox (see internal/sys/sandbox), the binary is
	// that sandbox's init process and never reaches the command line.
	sandbox.Init()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(cmd.Execute())
}
