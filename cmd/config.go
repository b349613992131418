package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/sys/config"
)

// ConfigOptions are the inputs of `agentteam config`.
type ConfigOptions struct {
	*launch.GlobalOptions
	// The team flags are accepted so that `config` shows what run would use.
	launch.TeamFlags
	AutoClaim bool
	IO        IOStreams
	// Paths prints where the files are looked for instead of the settings.
	Paths bool
	// Settings are the effective settings, filled before the run function.
	Settings []launch.Setting
}

// newConfigCmd builds `agentteam config`; runF, when not nil, replaces runConfig.
func newConfigCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "config",
		Short: "Print the effective settings and where each came from",
		Long: `Print the settings run and chat would use, one per line, each with where it came from:
flag, env NAME, project .agentteam/config.toml, user ~/.config/agentteam/config.toml, or default.
A flag wins over the environment, which wins over the project file, which wins over the user file.
The API key is never printed: only the name of the variable that holds it and whether it is set.
A project file's allow rules, a looser mode and sandbox env, writable and network = "on" apply
only once you trust the project (agentteam trust); until then they are listed as ignored.
--path prints where the two files are looked for. Nothing is written.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if !opts.Paths {
				settings, err := launch.LoadConfig(c, g)
				if err != nil {
					return err
				}
				opts.Settings = settings
			}
			if runF != nil {
				return runF(opts)
			}
			return runConfig(opts)
		},
	}
	fs := c.Flags()
	fs.BoolVar(&opts.Paths, "path", false, "print where the user and project config files are looked for")
	launch.AddTeamFlags(fs, &opts.TeamFlags)
	_ = fs.MarkHidden("resume")
	fs.BoolVar(&opts.AutoClaim, "auto-claim", false, "as for run: give idle teammates claimable tasks")
	return c
}

func runConfig(opts *ConfigOptions) error {
	if opts.Paths {
		return printPaths(opts)
	}
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(opts.Settings)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	for _, s := range opts.Settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, showValue(s), s.Source)
	}
	return tw.Flush()
}

func showValue(s launch.Setting) string {
	v := "(not set)"
	if s.Value != nil {
		v = fmt.Sprint(s.Value)
	}
	if s.Set != nil {
		if *s.Set {
			v += " (set)"
		} else {
			v += " (not set)"
		}
	}
	return v
}

func printPaths(opts *ConfigOptions) error {
	type file struct {
		Path  string `json:"path"`
		Found bool   `json:"found"`
	}
	found := func(p string) bool {
		fi, err := os.Stat(p)
		return p != "" && err == nil && !fi.IsDir()
	}
	user, project := config.UserPath(opts.Getenv), config.ProjectPath(opts.Workspace)
	files := map[string]file{"user": {user, found(user)}, "project": {project, found(project)}}
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(files)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	for _, k := range []string{"user", "project"} {
		f, state := files[k], "not found"
		if f.Found {
			state = "found"
		}
		if f.Path == "" {
			f.Path, state = "(none: neither XDG_CONFIG_HOME nor HOME is set)", ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k, f.Path, state)
	}
	return tw.Flush()
}
