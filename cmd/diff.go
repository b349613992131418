package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"

	"github.com/agentteam/agentteam/team/worktree"
)

// DiffOptions are the inputs of `agentteam diff`.
type DiffOptions struct {
	*launch.GlobalOptions
	IO   IOStreams
	Name string
	// Stat prints the diffstat instead of the patch.
	Stat bool
}

// newDiffCmd builds `agentteam diff`; runF, when not nil, replaces runDiff.
func newDiffCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show a teammate's change: its branch against the merge base with the workspace's branch",
		Long: `Print the patch of a teammate's branch (agentteam/NAME) against its merge base with the branch checked out
in the workspace: what merging it would bring. Work the teammate has not committed yet is committed when it
reports; until then its files are named on stderr. Nothing is changed.`,
		Args: exactName("diff"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runDiff(c, opts)
		},
	}
	c.Flags().BoolVar(&opts.Stat, "stat", false, "print the diffstat instead of the patch")
	return c
}

func runDiff(c *cobra.Command, opts *DiffOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(c.Context(), opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	wts := worktree.New(ws, st.Registry, nil)
	diff, uncommitted, err := wts.Diff(c.Context(), opts.Name, opts.Stat)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if _, err := fmt.Fprint(opts.IO.Out, diff); err != nil {
		return err
	}
	if len(uncommitted) > 0 && !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "%s also has uncommitted changes, not shown (committed when it reports): %s\n",
			opts.Name, strings.Join(uncommitted, ", "))
	}
	if diff == "" && !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "%s's branch has no changes against the merge base\n", opts.Name)
	}
	return nil
}
