package registry

import (
	"context"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// RegistryStore is the document the registry is kept in: the file
// (statefile.Doc, the default), a KV entry changed by compare-and-set on
// its revision (natsstore.Doc), or, on JetStream, an entry
// per teammate (entryRegistry, entries.go, over RegistryEntries). Update, UpdateInPlace and Submit apply fn
// to the current document, count the change (Config.Changed) and store it
// unless fn returns statefile.ErrNoChange; Submit need not wait, Flush
// waits for what was submitted. A missing document reads as the empty one.
// A change whose ctx is done before it is applied stores nothing.
type RegistryStore interface {
	Read(ctx context.Context) (*Config, error)
	Update(ctx context.Context, fn func(**Config) error) (*Config, error)
	UpdateInPlace(ctx context.Context, fn func(**Config) error) (*Config, error)
	Submit(ctx context.Context, fn func(**Config) error, after func(error))
	Flush()
}

// ModelRef is the model an agent talks to, as the registry keeps it.
type ModelRef struct {
	// Model is its label ("provider/model"); Provider and ModelName are its
	// parts, from which --resume builds the same model again.
	Model     string `json:"model,omitempty"`
	Provider  string `json:"provider,omitempty"`
	ModelName string `json:"modelName,omitempty"`
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

func (m *Member) SetUsage(u Usage) {
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
		agents = append(agents, AgentUsage{Agent: inbox.LeadName, Model: c.Lead.Model, Usage: c.Lead.Usage})
	}
	for i := range c.Teammates {
		m := &c.Teammates[i]
		agents = append(agents, AgentUsage{Agent: m.Name, Model: m.Model, Usage: m.Usage()})
	}
	return SumUsage(agents)
}

func (l *LeadEntry) Same(o LeadEntry) bool {
	if l.ModelRef != o.ModelRef || l.PromptTokens != o.PromptTokens || l.CompletionTokens != o.CompletionTokens || l.Tokens != o.Tokens {
		return false
	}
	if l.Cost == nil || o.Cost == nil {
		return l.Cost == nil && o.Cost == nil
	}
	return *l.Cost == *o.Cost
}

// Usage is what an agent's model calls have used and cost so far.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// Tokens is the servers' total (prompt and completion, usually).
	Tokens int `json:"tokens"`
	// Cost is nil when some of the tokens were spent on a model without a
	// price: an unknown cost is never shown as 0.
	Cost *float64 `json:"cost,omitempty"`
}

// PlanState is where a plan-mode teammate's plan is, shown in the registry.
type PlanState string

// Plan states.
const (
	PlanDrafting         PlanState = "drafting"
	PlanAwaitingApproval PlanState = "awaiting_approval"
	PlanApproved         PlanState = "approved"
	PlanRejected         PlanState = "rejected"
)

// HandoffStatus is where one side of a handoff is, shown in the registry.
// The sender goes awaiting_accept → context_preparing → awaiting_ack; the
// receiver, once its runtime accepted, is awaiting_context; both end
// completed or failed.
type HandoffStatus string

// Handoff statuses.
const (
	HandoffAwaitingAccept   HandoffStatus = "awaiting_accept"
	HandoffContextPreparing HandoffStatus = "context_preparing"
	HandoffAwaitingAck      HandoffStatus = "awaiting_ack"
	HandoffAwaitingContext  HandoffStatus = "awaiting_context"
	HandoffCompleted        HandoffStatus = "completed"
	HandoffFailed           HandoffStatus = "failed"
)

// HandoffSide is the part an agent plays in a handoff.
type HandoffSide string

// Sides of a handoff.
const (
	HandoffSender   HandoffSide = "sender"
	HandoffReceiver HandoffSide = "receiver"
)

// HandoffState is one side of a handoff as the registry shows it.
type HandoffState struct {
	ID        string        `json:"id"`
	Role      HandoffSide   `json:"role"`
	Peer      string        `json:"peer"`
	Task      string        `json:"task"`
	TaskID    string        `json:"task_id,omitempty"`
	State     HandoffStatus `json:"state"`
	Reason    string        `json:"reason,omitempty"`
	UpdatedAt time.Time     `json:"updatedAt"`
}
