package team

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentteam/agentteam/workspace"
)

// ModelRef is the model an agent talks to, as the registry keeps it.
type ModelRef struct {
	// Model is its label ("provider/model"); Provider and ModelName are its
	// parts, from which --resume builds the same model again.
	Model     string `json:"model,omitempty"`
	Provider  string `json:"provider,omitempty"`
	ModelName string `json:"modelName,omitempty"`
}

func modelRefOf(c ModelChoice) ModelRef {
	return ModelRef{Model: c.Label(), Provider: c.Provider, ModelName: c.Name}
}

// LeadEntry is the lead's model and usage in the registry (the lead has no
// member entry).
type LeadEntry struct {
	ModelRef
	Usage
}

// Usage is the teammate's usage as the registry keeps it.
func (m *Member) Usage() Usage {
	return Usage{PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens, Tokens: m.Tokens, Cost: m.Cost}
}

func (m *Member) setUsage(u Usage) {
	m.PromptTokens, m.CompletionTokens, m.Tokens, m.Cost = u.PromptTokens, u.CompletionTokens, u.Tokens, u.Cost
}

// AgentUsage is one agent's model and usage, as `team --json` and
// `run --json` show them.
type AgentUsage struct {
	Agent string `json:"agent"`
	Model string `json:"model,omitempty"`
	Usage
}

// TeamUsage is every agent's usage and the team's total.
type TeamUsage struct {
	Agents []AgentUsage `json:"agents"`
	// Total sums the agents; its Cost sums the agents that have one, and is
	// nil when none has.
	Total Usage `json:"total"`
	// Unpriced names the agents that spent tokens without a price: the
	// total cost leaves them out.
	Unpriced []string `json:"unpriced,omitempty"`
}

// SumUsage totals agents.
func SumUsage(agents []AgentUsage) TeamUsage {
	tu := TeamUsage{Agents: agents}
	if tu.Agents == nil {
		tu.Agents = []AgentUsage{}
	}
	var cost float64
	priced := false
	for _, a := range agents {
		tu.Total.PromptTokens += a.PromptTokens
		tu.Total.CompletionTokens += a.CompletionTokens
		tu.Total.Tokens += a.Tokens
		switch {
		case a.Cost != nil:
			cost += *a.Cost
			priced = true
		case a.Tokens > 0:
			tu.Unpriced = append(tu.Unpriced, a.Agent)
		}
	}
	if priced {
		tu.Total.Cost = &cost
	}
	return tu
}

// Usage is the registry's record of what the lead and every teammate used.
func (c *Config) Usage() TeamUsage {
	agents := make([]AgentUsage, 0, len(c.Teammates)+1)
	if c.Lead != nil {
		agents = append(agents, AgentUsage{Agent: workspace.LeadName, Model: c.Lead.Model, Usage: c.Lead.Usage})
	}
	for i := range c.Teammates {
		m := &c.Teammates[i]
		agents = append(agents, AgentUsage{Agent: m.Name, Model: m.Model, Usage: m.Usage()})
	}
	return SumUsage(agents)
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
		if c.Lead != nil && c.Lead.same(entry) {
			return errNoChange
		}
		c.Lead = &entry
		return nil
	})
}

func (l *LeadEntry) same(o LeadEntry) bool {
	if l.ModelRef != o.ModelRef || l.PromptTokens != o.PromptTokens || l.CompletionTokens != o.CompletionTokens || l.Tokens != o.Tokens {
		return false
	}
	if l.Cost == nil || o.Cost == nil {
		return l.Cost == nil && o.Cost == nil
	}
	return *l.Cost == *o.Cost
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
