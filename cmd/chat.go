package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newChatCmd(g *GlobalOptions, io IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "chat",
		Short: "The interactive team TUI (not built yet: use agentteam run)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("chat is not built yet in this version: use agentteam run \"...\" (add --demo to try it offline)")}
		},
	}
}
