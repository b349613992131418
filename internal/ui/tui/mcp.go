package tui

import (
	"fmt"

	"github.com/agentteam/agentteam/internal/plug/mcp"
)

// mcpChanged takes the MCP servers' states: one that stopped running (it
// did not start, or died) is a note in the lead's conversation with why,
// one that runs again a note too; the status line counts them (mcpStatus).
func (m *Model) mcpChanged(servers []mcp.Status) {
	before := map[string]string{}
	for _, s := range m.mcp {
		before[s.Name] = s.Err
	}
	for _, s := range servers {
		was, known := before[s.Name]
		switch {
		case s.Err != "" && (!known || was == ""):
			m.lead.add(&entry{kind: entryError, text: fmt.Sprintf("MCP server %s is not running: %s", s.Name, s.Err)})
		case s.Err == "" && known && was != "":
			tools := fmt.Sprintf("%d tools", len(s.Tools))
			if len(s.Tools) == 1 {
				tools = "1 tool"
			}
			m.lead.add(&entry{kind: entryNote, text: fmt.Sprintf("MCP server %s runs again (%s)", s.Name, tools)})
		}
	}
	m.mcp = servers
}

// mcpStatus is the status line's word on the MCP servers: how many run of
// how many, "" with none configured.
func (m *Model) mcpStatus() string {
	if len(m.mcp) == 0 {
		return ""
	}
	running := 0
	for _, s := range m.mcp {
		if s.Err == "" {
			running++
		}
	}
	return fmt.Sprintf("mcp %d/%d", running, len(m.mcp))
}
