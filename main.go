// Command agentteam runs a lead LLM agent and its teammates, who work
// together through plain files in a workspace.
package main

import (
	"os"

	"github.com/agentteam/agentteam/cmd"
)

func main() {
	os.Exit(cmd.Execute())
}
