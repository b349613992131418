package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/plug/mcp"
)

// MCPOptions are the inputs of `agentteam mcp`.
type MCPOptions struct {
	*launch.GlobalOptions
	IO IOStreams
}

// newMCPCmd builds `agentteam mcp`; runF, when not nil, replaces runMCP.
func newMCPCmd(g *launch.GlobalOptions, io IOStreams, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{GlobalOptions: g, IO: io}
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Start the configured MCP servers and list each one's state and tools",
		Long: `Start each server of [mcp.servers.NAME] in the config files (a project file's only once the project
is trusted: agentteam trust), list its tools as the agents see them (mcp__SERVER__TOOL), or say why it
did not start, then stop them.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := launch.LoadConfig(c, g); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMCP(c.Context(), opts)
		},
	}
	c.AddCommand(newMCPServeCmd(g, io, nil))
	return c
}

func runMCP(ctx context.Context, opts *MCPOptions) error {
	m := launch.StartMCP(ctx, opts.GlobalOptions, nil)
	defer m.Close()
	st := m.Status()
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(st)
	}
	if len(st) == 0 {
		_, err := fmt.Fprintln(opts.IO.Out, "no MCP servers are configured: add [mcp.servers.NAME] with command = \"...\" (or url = \"...\") to ~/.config/agentteam/config.toml")
		return err
	}
	for _, s := range st {
		if s.Err != "" {
			fmt.Fprintf(opts.IO.Out, "%s  not running: %s\n", s.Name, s.Err)
			continue
		}
		names := make([]string, len(s.Tools))
		for i, t := range s.Tools {
			names[i] = mcp.ToolName(s.Name, t)
		}
		fmt.Fprintf(opts.IO.Out, "%s  running, %d tools: %s\n", s.Name, len(names), strings.Join(names, ", "))
	}
	return nil
}
