package launch

import (
	"context"
	"fmt"
	"io"

	"github.com/agentteam/agentteam/internal/plug/mcp"
)

// StartMCP starts the configured MCP servers; each that did not start is
// one line on warn (nil: none), and its tools are missing.
func StartMCP(ctx context.Context, g *GlobalOptions, warn io.Writer) *mcp.Manager {
	if g.Config == nil || len(g.Config.MCP) == 0 {
		return nil
	}
	var servers []mcp.Server
	for _, s := range g.Config.MCPServers() {
		servers = append(servers, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL,
			Env: s.Env, Headers: s.Headers, Roles: s.Roles, Agents: s.Agents,
			StartTimeout: s.StartTimeout, CallTimeout: s.CallTimeout})
	}
	m := mcp.Start(ctx, servers, g.Getenv)
	if warn != nil {
		for _, s := range m.Status() {
			if s.Err != "" {
				fmt.Fprintf(warn, "agentteam: %s; its tools are missing until it starts\n", s.Err)
			}
		}
	}
	return m
}
