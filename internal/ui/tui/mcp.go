package tui

import (
	"fmt"

	"github.com/agentteam/agentteam/internal/plug/mcp"
)

// mcpState is the MCP servers' states, as last polled.
type mcpState struct {
	servers []mcp.Status
}

// changed takes the MCP servers' states: one that stopped running (it did
// not start, or died) is a note in the lead's conversation with why, one
// that runs again a note too; the status line counts them (status).
func (s *mcpState) changed(servers []mcp.Status, lead *convPane) {
	before := map[string]string{}
	for _, sv := range s.servers {
		before[sv.Name] = sv.Err
	}
	for _, sv := range servers {
		was, known := before[sv.Name]
		switch {
		case sv.Err != "" && (!known || was == ""):
			lead.add(&entry{kind: entryError, text: fmt.Sprintf("MCP server %s is not running: %s", sv.Name, sv.Err)})
		case sv.Err == "" && known && was != "":
			tools := fmt.Sprintf("%d tools", len(sv.Tools))
			if len(sv.Tools) == 1 {
				tools = "1 tool"
			}
			lead.add(&entry{kind: entryNote, text: fmt.Sprintf("MCP server %s runs again (%s)", sv.Name, tools)})
		}
	}
	s.servers = servers
}

// status is the status line's word on the MCP servers: how many run of
// how many, "" with none configured.
func (s *mcpState) status() string {
	if len(s.servers) == 0 {
		return ""
	}
	running := 0
	for _, sv := range s.servers {
		if sv.Err == "" {
			running++
		}
	}
	return fmt.Sprintf("mcp %d/%d", running, len(s.servers))
}
