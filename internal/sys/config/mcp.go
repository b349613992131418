package config

import (
	"fmt"
	"sort"
	"time"

	"github.com/BurntSushi/toml"
)

// MCPServer is one [mcp.servers.NAME] table: a stdio server (command,
// args, env: the names of variables it gets) or a streamable HTTP one (url,
// headers: each value the name of the variable holding it), who gets its
// tools (roles, agents; none: every agent), and its timeouts.
type MCPServer struct {
	Name                      string
	Command                   string
	Args, Env                 []string
	URL                       string
	Headers                   map[string]string
	Roles, Agents             []string
	StartTimeout, CallTimeout time.Duration
	From                      Source
}

type rawMCP struct {
	Servers map[string]rawMCPServer `toml:"servers"`
}

type rawMCPServer struct {
	Command      *string           `toml:"command"`
	Args         []string          `toml:"args"`
	Env          []string          `toml:"env"`
	URL          *string           `toml:"url"`
	Headers      map[string]string `toml:"headers"`
	Roles        []string          `toml:"roles"`
	Agents       []string          `toml:"agents"`
	Enabled      *bool             `toml:"enabled"`
	StartTimeout *string           `toml:"start_timeout"`
	CallTimeout  *string           `toml:"call_timeout"`
}

// checkMCP refuses a server table no server can be started from.
func (f *rawFile) checkMCP(fail func(toml.Key, string, ...any) error) error {
	for _, name := range sortedKeys(f.MCP.Servers) {
		s := f.MCP.Servers[name]
		key := toml.Key{"mcp", "servers", name}
		switch {
		case !validServerName(name):
			return fail(key, "names a server with characters other than letters, digits, - and _")
		case (s.Command == nil) == (s.URL == nil):
			return fail(key, "needs either command (a stdio server) or url (a streamable HTTP one)")
		case s.Command != nil && *s.Command == "":
			return fail(append(key, "command"), "is empty")
		}
		for _, d := range []struct {
			k string
			v *string
		}{{"start_timeout", s.StartTimeout}, {"call_timeout", s.CallTimeout}} {
			if err := checkDuration(fail, append(key, d.k), d.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func validServerName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// mergeMCP lays f's servers over c's; enabled = false takes one away.
func (c *Config) mergeMCP(f *rawFile, src Source) {
	for name, s := range f.MCP.Servers {
		if s.Enabled != nil && !*s.Enabled {
			delete(c.MCP, name)
			continue
		}
		if c.MCP == nil {
			c.MCP = map[string]MCPServer{}
		}
		m := MCPServer{Name: name, Args: s.Args, Env: s.Env, Headers: s.Headers, Roles: s.Roles, Agents: s.Agents, From: src}
		if s.Command != nil {
			m.Command = *s.Command
		}
		if s.URL != nil {
			m.URL = *s.URL
		}
		if s.StartTimeout != nil {
			m.StartTimeout, _ = time.ParseDuration(*s.StartTimeout)
		}
		if s.CallTimeout != nil {
			m.CallTimeout, _ = time.ParseDuration(*s.CallTimeout)
		}
		c.MCP[name] = m
	}
}

// MCPServers are the configured servers, by name.
func (c *Config) MCPServers() []MCPServer {
	out := make([]MCPServer, 0, len(c.MCP))
	for _, s := range c.MCP {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// heldMCP lines name the project's servers, which wait for trust.
func heldMCP(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("mcp.servers.%s", n))
	}
	return out
}
