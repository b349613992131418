package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// DenyOptions are the inputs of `agentteam deny`.
type DenyOptions struct {
	*launch.GlobalOptions
	IO     IOStreams
	ID     string
	Reason string
	Now    func() time.Time
}

// newDenyCmd builds `agentteam deny`; runF, when not nil, replaces runDeny.
func newDenyCmd(g *launch.GlobalOptions, io IOStreams, runF func(*DenyOptions) error) *cobra.Command {
	opts := &DenyOptions{GlobalOptions: g, IO: io, Now: time.Now}
	return &cobra.Command{
		Use:   "deny ID REASON",
		Short: "Refuse a tool call that waits for permission, with the reason the agent reads",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 || strings.TrimSpace(strings.Join(args[1:], " ")) == "" {
				return exit.Usagef("deny needs the request id and a reason: agentteam deny ID \"why not\"")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID, opts.Reason = args[0], strings.Join(args[1:], " ")
			if runF != nil {
				return runF(opts)
			}
			return runDeny(c.Context(), opts)
		},
	}
}

func runDeny(ctx context.Context, opts *DenyOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	a, _, err := permask.Answer(ctx, opts.GlobalOptions, ws, st, opts.ID, false, false, opts.Reason, opts.Now())
	if err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "denied %s's %s (request %s)\n", a.Agent, a.Tool, a.RequestID)
	}
	return nil
}
