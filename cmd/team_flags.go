package cmd

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

// TeamFlags are the flags of the commands that run a team (run, chat).
type TeamFlags struct {
	MaxTurns int
	// Resume continues the team already in the workspace.
	Resume bool
	// The protocols' waiting steps.
	ShutdownTimeout, PlanTimeout, HandoffTimeout time.Duration
}

func addTeamFlags(fs *pflag.FlagSet, f *TeamFlags) {
	fs.IntVar(&f.MaxTurns, "max-turns", team.DefaultMaxTurns, "model turns per work cycle of one agent")
	fs.BoolVar(&f.Resume, "resume", false, "continue the team in this workspace: the lead's conversation, the teammates (idle, with theirs) and unread messages")
	fs.DurationVar(&f.ShutdownTimeout, "shutdown-timeout", team.DefaultShutdownTimeout, "how long a teammate may take to answer a shutdown request before it is shut down by force")
	fs.DurationVar(&f.PlanTimeout, "plan-timeout", team.DefaultPlanTimeout, "how long a submitted plan waits for the lead's review before it comes back rejected")
	fs.DurationVar(&f.HandoffTimeout, "handoff-timeout", team.DefaultHandoffTimeout, "how long each step of a handoff may take before the handoff fails")
}

// checkPool refuses pool bounds no team can run with (bad usage).
func checkPool(g *GlobalOptions) error {
	if g.MaxWorkers < 1 {
		return usageErrorf("--max-workers must be at least 1")
	}
	if g.MaxQueue < 0 {
		return usageErrorf("--max-queue must not be negative")
	}
	return nil
}

// options are the team options the global and team flags describe.
func (f TeamFlags) options(g *GlobalOptions, ws *workspace.Workspace, models team.Models) team.Options {
	return team.Options{
		Workspace:       ws,
		Models:          models,
		MaxWorkers:      g.MaxWorkers,
		MaxQueue:        g.MaxQueue,
		MaxTurns:        f.MaxTurns,
		Resume:          f.Resume,
		ShutdownTimeout: f.ShutdownTimeout,
		PlanTimeout:     f.PlanTimeout,
		HandoffTimeout:  f.HandoffTimeout,
	}
}
