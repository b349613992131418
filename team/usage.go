package team

import (
	"slices"
	"strings"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

func modelRefOf(c models.ModelChoice) registry.ModelRef {
	return registry.ModelRef{Model: c.Label(), Provider: c.Provider, ModelName: c.Name}
}

// Usage is what the lead and the teammates of this process used so far.
func (t *Team) Usage() registry.TeamUsage {
	agents := []registry.AgentUsage{{Agent: workspace.LeadName, Model: t.LeadModel(), Usage: t.leadModel.Usage()}}
	t.roster.mu.Lock()
	for _, m := range t.roster.members {
		if m.model != nil {
			agents = append(agents, registry.AgentUsage{Agent: m.name, Model: m.model.Choice().Label(), Usage: m.model.Usage()})
		}
	}
	t.roster.mu.Unlock()
	// Map order is random: lead first, then by name.
	slices.SortFunc(agents[1:], func(a, b registry.AgentUsage) int { return strings.Compare(a.Agent, b.Agent) })
	return registry.SumUsage(agents)
}

// LeadUsage is what the lead used, in this process and, resumed, before.
func (t *Team) LeadUsage() registry.Usage { return t.leadModel.Usage() }

// writeLeadUsage records the lead's model and usage in the registry.
func (t *Team) writeLeadUsage() {
	entry := registry.LeadEntry{ModelRef: modelRefOf(t.leadModel.Choice()), Usage: t.leadModel.Usage()}
	_, _ = t.reg.Update(func(c *registry.Config) error {
		if c.Lead != nil && c.Lead.Same(entry) {
			return statefile.ErrNoChange
		}
		c.Lead = &entry
		return nil
	})
}
