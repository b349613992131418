package team

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentteam/agentteam/workspace"
)

func modelRefOf(c ModelChoice) ModelRef {
	return ModelRef{Model: c.Label(), Provider: c.Provider, ModelName: c.Name}
}

// Usage is what the lead and the teammates of this process used so far.
func (t *Team) Usage() TeamUsage {
	agents := []AgentUsage{{Agent: workspace.LeadName, Model: t.LeadModel(), Usage: t.leadModel.usage()}}
	t.roster.mu.Lock()
	for _, m := range t.roster.members {
		if m.model != nil {
			agents = append(agents, AgentUsage{Agent: m.name, Model: m.model.choice().Label(), Usage: m.model.usage()})
		}
	}
	t.roster.mu.Unlock()
	// Map order is random: lead first, then by name.
	slices.SortFunc(agents[1:], func(a, b AgentUsage) int { return strings.Compare(a.Agent, b.Agent) })
	return SumUsage(agents)
}

// LeadUsage is what the lead used, in this process and, resumed, before.
func (t *Team) LeadUsage() Usage { return t.leadModel.usage() }

// writeLeadUsage records the lead's model and usage in the registry.
func (t *Team) writeLeadUsage() {
	entry := LeadEntry{ModelRef: modelRefOf(t.leadModel.choice()), Usage: t.leadModel.usage()}
	_, _ = t.reg.Update(func(c *Config) error {
		if c.Lead != nil && c.Lead.Same(entry) {
			return errNoChange
		}
		c.Lead = &entry
		return nil
	})
}

// FormatCost writes a cost for people: "-" when unknown, else in currency
// units with two significant digits below 1 (a small cost is not shown as
// 0) and cents above.
func FormatCost(c *float64) string {
	if c == nil {
		return "-"
	}
	v := *c
	switch {
	case v == 0:
		return "0"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	decimals := 1 - int(math.Floor(math.Log10(v)))
	return strconv.FormatFloat(v, 'f', max(decimals, 2), 64)
}
