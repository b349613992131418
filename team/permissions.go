package team

import (
	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/plugs"
)

// Permissions is the team's permission gate: its asks waiting, and the
// answers the person or the lead give them; nil-safe when the team asks
// nobody (every call runs).
func (t *Team) Permissions() *permgate.Service { return t.perms }

// withRules is q with the lead's rules for its teammate (permgate.Rules).
func withRules(p *permgate.Service, q hosts.Request) hosts.Request {
	r := p.RulesFor(q.Name)
	q.Asks, q.AskTimeout, q.Mode, q.Deny = r.Asks, r.AskTimeout, r.Mode, r.Deny
	return q
}

// newGate is the team's permission gate (nil when opts ask for none),
// built once its requests, indexes and hosting are.
func newGate(t *Team, opts Options) *permgate.Service {
	deps := permgate.Deps{Requests: t.requests, Events: t.events, Inboxes: t.store, Indexes: t.indexes,
		ReadOnly: opts.MCP.ReadOnly, Runs: t.roster.runs, Failure: failure, PollInterval: opts.PollInterval}
	if t.hosting != nil {
		deps.Hosts = gateHosts{t.hosting}
	}
	return permgate.New(opts.Permissions, deps)
}

// newPlugs is the person's hooks and AGENTS.md files for the team's
// agents, under its permission rules.
func newPlugs(t *Team) *plugs.Plugs {
	o := plugs.Options{Hooks: t.opts.Hooks, Instructions: t.opts.Instructions, Events: t.events,
		TeamName: t.opts.teamName(), Workspace: t.ws.Root, SessionPath: func(name string) string {
			if name == inbox.LeadName {
				return t.ws.SessionPath(name)
			}
			return t.mates.path(name)
		}}
	if t.perms != nil {
		o.Policy = t.perms.Policy
	}
	return plugs.New(o)
}

// gateHosts is the hosting as the permission gate sees it.
type gateHosts struct{ h *hosting }

func (g gateHosts) ID() string               { return g.h.opts.ID }
func (g gateHosts) Lead() bool               { return g.h.isLead }
func (g gateHosts) Alive(worker string) bool { return g.h.host.Alive(worker) }
