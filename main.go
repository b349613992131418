// Command agentteam runs a lead LLM agent and its teammates, who work
// together through plain files in a workspace.
package main

import (
	"os"

	"github.com/agentteam/agentteam/cmd"
	"github.com/agentteam/agentteam/internal/sandbox"
)

func main() {
	// Started as a command's sandbox (see internal/sandbox), the binary is
	// that sandbox's init process and never reaches the command line.
	sandbox.Init()
	os.Exit(cmd.Execute())
}
