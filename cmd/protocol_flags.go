package cmd

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/team"
)

// ProtocolTimeouts bound the waiting steps of the team protocols.
type ProtocolTimeouts struct {
	Shutdown, Plan, Handoff time.Duration
}

func addProtocolFlags(fs *pflag.FlagSet, p *ProtocolTimeouts) {
	fs.DurationVar(&p.Shutdown, "shutdown-timeout", team.DefaultShutdownTimeout, "how long a teammate may take to answer a shutdown request before it is shut down by force")
	fs.DurationVar(&p.Plan, "plan-timeout", team.DefaultPlanTimeout, "how long a submitted plan waits for the lead's review before it comes back rejected")
	fs.DurationVar(&p.Handoff, "handoff-timeout", team.DefaultHandoffTimeout, "how long each step of a handoff may take before the handoff fails")
}

// apply copies the timeouts into team options.
func (p ProtocolTimeouts) apply(o *team.Options) {
	o.ShutdownTimeout, o.PlanTimeout, o.HandoffTimeout = p.Shutdown, p.Plan, p.Handoff
}
