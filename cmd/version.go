package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version and Commit are set at build time with -ldflags "-X ...".
var (
	Version = "dev"
	Commit  = ""
)

func newVersionCmd(g *GlobalOptions, io IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
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
			if g.JSON {
				return json.NewEncoder(io.Out).Encode(map[string]string{"version": Version, "commit": commit, "go": runtime.Version()})
			}
			_, err := fmt.Fprintf(io.Out, "agentteam %s (commit %s, %s)\n", Version, commit, runtime.Version())
			return err
		},
	}
}
