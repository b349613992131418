package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/launch"
)

// Version and Commit are set at build time with -ldflags "-X ...".
var (
	Version = "dev"
	Commit  = ""
)

// VersionOptions are the inputs of `agentteam version`.
type VersionOptions struct {
	*launch.GlobalOptions
	IO IOStreams
}

// newVersionCmd builds `agentteam version`; runF, when not nil, replaces runVersion.
func newVersionCmd(g *launch.GlobalOptions, io IOStreams, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{GlobalOptions: g, IO: io}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
}

func runVersion(opts *VersionOptions) error {
	commit := Commit
	if commit == "" {
		commit = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && s.Value != "" {
					commit = s.Value
				}
			}
		}
	}
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(map[string]string{"version": Version, "commit": commit, "go": runtime.Version()})
	}
	_, err := fmt.Fprintf(opts.IO.Out, "agentteam %s (commit %s, %s)\n", Version, commit, runtime.Version())
	return err
}
