package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/internal/sandbox"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// TeamFlags are the flags of the commands that run a team (run, chat).
type TeamFlags struct {
	MaxTurns int
	// Resume continues the team already in the workspace.
	Resume bool
	// The protocols' waiting steps.
	ShutdownTimeout, PlanTimeout, HandoffTimeout time.Duration
	// Sandbox is auto, required or off; SandboxNetwork on or off.
	Sandbox, SandboxNetwork string
}

func addTeamFlags(fs *pflag.FlagSet, f *TeamFlags) {
	fs.IntVar(&f.MaxTurns, "max-turns", team.DefaultMaxTurns, "model turns per work cycle of one agent")
	fs.BoolVar(&f.Resume, "resume", false, "continue the team in this workspace: the lead's conversation, the teammates (idle, with theirs) and unread messages")
	fs.DurationVar(&f.ShutdownTimeout, "shutdown-timeout", team.DefaultShutdownTimeout, "how long a teammate may take to answer a shutdown request before it is shut down by force")
	fs.DurationVar(&f.PlanTimeout, "plan-timeout", team.DefaultPlanTimeout, "how long a submitted plan waits for the lead's review before it comes back rejected")
	fs.DurationVar(&f.HandoffTimeout, "handoff-timeout", team.DefaultHandoffTimeout, "how long each step of a handoff may take before the handoff fails")
	fs.StringVar(&f.Sandbox, "sandbox", string(sandbox.ModeAuto), "run each command in a sandbox (own processes only, writes only in the workspace and its temp dir): auto (where the kernel can), required (refuse to start without), off")
	fs.StringVar(&f.SandboxNetwork, "sandbox-network", "on", "whether sandboxed commands may reach the network: on or off")
}

// sandbox settles how the team's commands are confined. Unless --sandbox
// off, it checks once that the kernel can sandbox them; where it cannot,
// it says why in one line on errOut and runs them unconfined, or, with
// --sandbox required, refuses to start. cleanup removes the agents' temp
// dirs; call it after the team has closed.
func (f TeamFlags) sandbox(ctx context.Context, g *GlobalOptions, errOut io.Writer) (sb tools.Sandbox, cleanup func(), err error) {
	mode, err := sandbox.ParseMode(f.Sandbox)
	if err != nil {
		return sb, nil, usageErrorf("--sandbox: %v", err)
	}
	network, err := sandbox.ParseNetwork(f.SandboxNetwork)
	if err != nil {
		return sb, nil, usageErrorf("--sandbox-network: %v", err)
	}
	var extraEnv, writable []string
	if g.Config != nil {
		extraEnv = g.Config.Sandbox.Env.V
		for _, dir := range g.Config.Sandbox.Writable.V {
			if rest, ok := strings.CutPrefix(dir, "~/"); ok {
				dir = filepath.Join(g.Getenv("HOME"), rest)
			}
			writable = append(writable, dir)
		}
	}
	tmp, err := os.MkdirTemp("", "agentteam-")
	if err != nil {
		return sb, nil, fmt.Errorf("make the agents' temp dir: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	sb = tools.Sandbox{
		Network:  network,
		Env:      sandbox.Environ(os.Environ(), extraEnv, []string{g.keyEnv(), defaultKeyEnv}),
		Writable: writable,
		TempDir:  tmp,
	}
	if mode == sandbox.ModeOff {
		sb.Reason = "--sandbox off"
		return sb, cleanup, nil
	}
	if err := sandbox.Check(ctx, network); err != nil {
		if mode == sandbox.ModeRequired {
			cleanup()
			return sb, nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("--sandbox required, but commands cannot be sandboxed here: %v", err)}
		}
		sb.Reason = err.Error()
		fmt.Fprintf(errOut, "sandbox: off (%s); commands run unconfined (--sandbox required refuses to start instead)\n", sb.Reason)
		return sb, cleanup, nil
	}
	sb.On = true
	return sb, cleanup, nil
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
func (f TeamFlags) options(g *GlobalOptions, ws *workspace.Workspace, model loop.Model) team.Options {
	return team.Options{
		Workspace:       ws,
		Model:           model,
		MaxWorkers:      g.MaxWorkers,
		MaxQueue:        g.MaxQueue,
		MaxTurns:        f.MaxTurns,
		Resume:          f.Resume,
		ShutdownTimeout: f.ShutdownTimeout,
		PlanTimeout:     f.PlanTimeout,
		HandoffTimeout:  f.HandoffTimeout,
	}
}
