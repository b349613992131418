package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/sys/config"
)

// ApproveOptions are the inputs of `agentteam approve`.
type ApproveOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	ID string
	// Always adds the ask's rule to the project file's allow list.
	Always bool
	Now    func() time.Time
}

// newApproveCmd builds `agentteam approve`; runF, when not nil, replaces runApprove.
func newApproveCmd(g *launch.GlobalOptions, io IOStreams, runF func(*ApproveOptions) error) *cobra.Command {
	opts := &ApproveOptions{GlobalOptions: g, IO: io, Now: time.Now}
	c := &cobra.Command{
		Use:   "approve ID",
		Short: "Allow a tool call that waits for permission (see agentteam requests)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exit.Usagef("approve needs the request id: agentteam approve ID (agentteam requests lists them)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runApprove(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.Always, "always", false, "also allow every identical call from now on: adds the rule to [permissions] allow in .agentteam/config.toml")
	return c
}

func runApprove(ctx context.Context, opts *ApproveOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	a, applies, err := permask.Answer(ctx, opts.GlobalOptions, ws, st, opts.ID, true, opts.Always, "", opts.Now())
	if err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "allowed %s's %s (request %s)\n", a.Agent, a.Tool, a.RequestID)
		if opts.Always {
			fmt.Fprintf(opts.IO.Err, "added %s to [permissions] allow in %s\n", a.Rule, config.ProjectPath(ws.Root))
			if !applies {
				fmt.Fprintf(opts.IO.Err, "the project file is not trusted, so later runs allow it only after agentteam trust\n")
			}
		}
	}
	return nil
}
