package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/workspace"
)

// AdoptOptions are the inputs of `agentteam adopt`.
type AdoptOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	// Yes trusts the state; without it adopt only shows what is there.
	Yes bool
}

// newAdoptCmd builds `agentteam adopt`; runF, when not nil, replaces runAdopt.
func newAdoptCmd(g *launch.GlobalOptions, io IOStreams, runF func(*AdoptOptions) error) *cobra.Command {
	opts := &AdoptOptions{GlobalOptions: g, IO: io}
	c := &cobra.Command{
		Use:   "adopt",
		Short: "Show agentteam state this user's agentteam did not make here (a clone, a copy), and with --yes trust it",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runAdopt(opts)
		},
	}
	c.Flags().BoolVar(&opts.Yes, "yes", false, "trust the state shown: its messages, registry, sessions and tasks reach the models")
	return c
}

func runAdopt(opts *AdoptOptions) error {
	ws, err := workspace.Open(opts.Workspace)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	var fe *workspace.ForeignError
	if err := ws.CheckState(); err != nil && !errors.As(err, &fe) {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	files, err := ws.ForeignState()
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if len(files) == 0 {
		fmt.Fprintf(opts.IO.Err, "%s holds nothing to adopt: agentteam made it here for you, or it holds no state\n", ws.StatePath())
		return nil
	}
	for _, f := range files {
		size := int64(0)
		if fi, err := os.Lstat(filepath.Join(ws.StatePath(), filepath.FromSlash(f))); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(opts.IO.Out, "%8d  %s\n", size, f)
	}
	if !opts.Yes {
		fmt.Fprintf(opts.IO.Err, "agentteam did not make this state in %s for you; read it, then run agentteam adopt --yes to trust it, or move it aside (mv %s %s.foreign) to start fresh\n",
			ws.Root, ws.StatePath(), ws.StatePath())
		return nil
	}
	if err := ws.Adopt(); err != nil {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("adopt %s: %w", ws.StatePath(), err)}
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "adopted %s: its messages, registry, sessions and tasks are trusted from now on\n", ws.StatePath())
	}
	return nil
}
