package cmd

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/sys/config"
)

// TrustOptions are the inputs of `agentteam trust`.
type TrustOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	// Revoke forgets the trust instead of recording it.
	Revoke bool
	// List prints the trusted projects instead.
	List bool
}

// newTrustCmd builds `agentteam trust`; runF, when not nil, replaces runTrust.
func newTrustCmd(g *launch.GlobalOptions, io IOStreams, runF func(*TrustOptions) error) *cobra.Command {
	opts := &TrustOptions{GlobalOptions: g, IO: io}
	c := &cobra.Command{
		Use:   "trust",
		Short: "Let the workspace's project file allow more than asking (allow rules, a looser mode, sandbox env, writable, network)",
		Long: `A project file (.agentteam/config.toml) comes with the repository, which someone else
may have written. What it says that lets more run without asking, or gives commands more
(permissions allow rules, a looser permissions mode, sandbox env, writable and network = "on"),
is ignored until you trust the project: trust prints those settings and records, in your own
state (~/.local/state/agentteam/trusted.json, or under XDG_STATE_HOME), that you trust this
workspace's file as it is now. A change to the file needs trust again. --revoke forgets it,
--list prints the trusted workspaces.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Revoke && opts.List {
				return exit.Usagef("--revoke and --list do not go together")
			}
			if runF != nil {
				return runF(opts)
			}
			return runTrust(opts)
		},
	}
	c.Flags().BoolVar(&opts.Revoke, "revoke", false, "forget the trust of this workspace's project file")
	c.Flags().BoolVar(&opts.List, "list", false, "print the trusted workspaces")
	return c
}

func runTrust(opts *TrustOptions) error {
	if opts.List {
		return listTrusted(opts)
	}
	if opts.Revoke {
		had, err := config.Revoke(opts.Getenv, opts.Workspace)
		if err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
		if !opts.Quiet {
			if had {
				fmt.Fprintf(opts.IO.Err, "no longer trusted: %s\n", config.ProjectPath(opts.Workspace))
			} else {
				fmt.Fprintf(opts.IO.Err, "%s was not trusted\n", config.ProjectPath(opts.Workspace))
			}
		}
		return nil
	}
	p, err := config.ReadProject(opts.Getenv, opts.Workspace)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if err := config.Trust(opts.Getenv, p); err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(struct {
			Path      string   `json:"path"`
			Workspace string   `json:"workspace"`
			SHA256    string   `json:"sha256"`
			Widening  []string `json:"widening"`
		}{p.Path, p.Workspace, p.SHA256, nonNil(p.Widening)})
	}
	for _, l := range p.Widening {
		fmt.Fprintln(opts.IO.Out, l)
	}
	if !opts.Quiet {
		what := "it says nothing that needs trust"
		if len(p.Widening) > 0 {
			what = "the settings above now apply"
		}
		fmt.Fprintf(opts.IO.Err, "trusted %s as it is now (sha256 %s…): %s; a change to it needs agentteam trust again\n", p.Path, p.SHA256[:12], what)
	}
	return nil
}

func listTrusted(opts *TrustOptions) error {
	list, err := config.TrustedProjects(opts.Getenv)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if opts.JSON {
		type row struct {
			Workspace string    `json:"workspace"`
			SHA256    string    `json:"sha256"`
			At        time.Time `json:"trusted_at"`
		}
		rows := make([]row, 0, len(list))
		for _, t := range list {
			rows = append(rows, row{t.Workspace, t.SHA256, t.At})
		}
		return json.NewEncoder(opts.IO.Out).Encode(rows)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Workspace, t.At.Format(time.RFC3339), t.SHA256[:min(12, len(t.SHA256))])
	}
	return tw.Flush()
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
