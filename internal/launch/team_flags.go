package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/plug/agentsmd"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/sys/sandbox"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/worktree"
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
	// Isolation is where teammates work unless their spawn says: worktree or none.
	Isolation string
	// GitRemote is the remote of this clone the team's work travels
	// through: a worker pushes teammates' branches there, the lead the
	// commit they start from; "" is none.
	GitRemote string
	// Permissions: the mode ("" for the command's default), rules added
	// by flag, who answers asks ("" for the command's default) and how
	// long an ask waits.
	PermissionMode, PermissionDelegate string
	Allow, Deny                        []string
	PermissionTimeout                  time.Duration
	// Sandbox is auto, required or off; SandboxNetwork on or off.
	Sandbox, SandboxNetwork string
	// Budget bounds the run's or chat's model calls, tokens and cost.
	Budget models.Budget
}

func AddTeamFlags(fs *pflag.FlagSet, f *TeamFlags) {
	fs.IntVar(&f.MaxTurns, "max-turns", team.DefaultMaxTurns, "model turns per work cycle of one agent")
	fs.BoolVar(&f.Resume, "resume", false, "continue the team in this workspace: the lead's conversation, the teammates (idle, with theirs) and unread messages")
	fs.DurationVar(&f.ShutdownTimeout, "shutdown-timeout", protocol.DefaultShutdownTimeout, "how long a teammate may take to answer a shutdown request before it is shut down by force")
	fs.DurationVar(&f.PlanTimeout, "plan-timeout", protocol.DefaultPlanTimeout, "how long a submitted plan waits for the lead's review before it comes back rejected")
	fs.DurationVar(&f.HandoffTimeout, "handoff-timeout", handoff.DefaultTimeout, "how long each step of a handoff may take before the handoff fails")
	fs.StringVar(&f.Isolation, "isolation", worktree.IsolationNone, "where teammates work unless their spawn says: worktree (each its own git worktree and branch agentteam/NAME) or none (the shared workspace)")
	fs.StringVar(&f.GitRemote, "git-remote", "origin",
		`on a team across hosts, the git remote of this clone that worktree teammates' work goes through: a worker pushes each one's branch there when it reports, the lead the commit they start from ("" pushes nothing)`)
	fs.StringVar(&f.PermissionMode, "permission-mode", "", "what runs without asking: ask (commands and writes ask), auto-edit (writes in the agent's root run, commands ask), yolo (all runs); default ask for chat, yolo for run, unless [permissions] mode says")
	fs.StringArrayVar(&f.Allow, "allow", nil, "allow tool calls matching RULE without asking, e.g. 'bash(go test *)' or 'write_file(docs/**)' (repeatable)")
	fs.StringArrayVar(&f.Deny, "deny", nil, "refuse tool calls matching RULE, whatever the mode (repeatable)")
	fs.StringVar(&f.PermissionDelegate, "permission-delegate", "", "who answers asks: user (the TUI, or agentteam approve/deny from another terminal), lead (the lead model answers teammates' asks), none (asks are denied); default user for chat, none for run")
	fs.DurationVar(&f.PermissionTimeout, "permission-timeout", 0, "how long an ask waits for its answer before the call is denied (default 5m, or [permissions] timeout)")
	fs.StringVar(&f.Sandbox, "sandbox", string(sandbox.ModeAuto), "run each command in a sandbox (own processes only, writes only in the workspace and its temp dir): auto (where the kernel can), required (refuse to start without), off")
	fs.StringVar(&f.SandboxNetwork, "sandbox-network", "on", "whether sandboxed commands may reach the network: on or off")
	fs.IntVar(&f.Budget.MaxCalls, "max-model-calls", 0, "stop the team once its agents have made this many model calls in this run or chat (0: no bound)")
	fs.IntVar(&f.Budget.MaxTokens, "max-tokens", 0, "stop the team once its model calls have used this many tokens in this run or chat (0: no bound)")
	fs.Float64Var(&f.Budget.MaxCost, "max-cost", 0, "stop the team once its model calls cost this much at the configured prices, in this run or chat (0: no bound)")
}

// CheckBounds refuses a turn limit or budget no run can have (bad usage).
func (f TeamFlags) CheckBounds() error {
	switch {
	case f.MaxTurns < 1:
		return exit.Usagef("--max-turns must be at least 1 (got %d)", f.MaxTurns)
	case f.Budget.MaxCalls < 0 || f.Budget.MaxTokens < 0 || f.Budget.MaxCost < 0:
		return exit.Usagef("--max-model-calls, --max-tokens and --max-cost must not be negative (0 bounds nothing)")
	}
	return nil
}

// CheckIsolation refuses an --isolation that is neither worktree nor none (bad usage).
func (f TeamFlags) CheckIsolation() error {
	if err := worktree.CheckIsolation(f.Isolation); err != nil {
		return exit.Usagef("--isolation: %v", err)
	}
	return nil
}

// CheckGitRemote refuses a --git-remote git could take for an option or a URL (bad usage).
func (f TeamFlags) CheckGitRemote() error {
	if !config.ValidGitRemote(f.GitRemote) {
		return exit.Usagef("--git-remote %q: give the name of one of this clone's remotes (git remote -v lists them)", f.GitRemote)
	}
	return nil
}

// Permissions are the team's permission options: flags over the config
// files over the command's defaults (chat asks the person; run, with
// nobody to ask, runs what no rule refuses unless a mode is set).
func (f TeamFlags) Permissions(g *GlobalOptions, chat bool) (*permgate.Options, error) {
	var file config.Permissions
	if g.Config != nil {
		file = g.Config.Permissions
	}
	o := &permgate.Options{Person: chat, Timeout: f.PermissionTimeout, Delegate: f.PermissionDelegate}
	mode := f.baseMode(g, chat)
	if f.heldModeApplies(g, chat) {
		mode = string(g.Config.Held.Mode.V)
	}
	m, err := permission.ParseMode(mode)
	if err != nil {
		return nil, exit.Usagef("--permission-mode must be ask, auto-edit or yolo, not %q", mode)
	}
	o.Policy.Mode = m
	o.Policy.Allow = append(o.Policy.Allow, file.Allow...)
	o.Policy.AskRules = append(o.Policy.AskRules, file.Ask...)
	o.Policy.Deny = append(o.Policy.Deny, file.Deny...)
	for _, l := range []struct {
		flag  string
		rules []string
		dst   *[]permission.Entry
	}{{"allow", f.Allow, &o.Policy.Allow}, {"deny", f.Deny, &o.Policy.Deny}} {
		for _, s := range l.rules {
			r, err := permission.ParseRule(s)
			if err != nil {
				return nil, exit.Usagef("--%s: %v", l.flag, err)
			}
			*l.dst = append(*l.dst, permission.Entry{Rule: r, From: "flag --" + l.flag})
		}
	}
	switch o.Delegate {
	case "":
		o.Delegate = permgate.DelegateNone
		if chat {
			o.Delegate = permgate.DelegateUser
		}
	case permgate.DelegateUser, permgate.DelegateLead, permgate.DelegateNone:
	default:
		return nil, exit.Usagef("--permission-delegate must be user, lead or none, not %q", o.Delegate)
	}
	if o.Timeout < 0 {
		return nil, exit.Usagef("--permission-timeout must not be negative")
	}
	if o.Timeout == 0 && file.Timeout.IsSet() {
		o.Timeout = file.Timeout.V
	}
	return o, nil

}

// OpenSandbox settles how the team's commands are confined. Unless --OpenSandbox
// off, it checks once that the kernel can OpenSandbox them; where it cannot,
// it says why in one line on errOut and runs them unconfined, or, with
// --OpenSandbox required, refuses to start. cleanup removes the agents' temp
// dirs; call it after the team has closed.
func (f TeamFlags) OpenSandbox(ctx context.Context, g *GlobalOptions, errOut io.Writer) (sb tools.Sandbox, cleanup func(), err error) {
	mode, err := sandbox.ParseMode(f.Sandbox)
	if err != nil {
		return sb, nil, exit.Usagef("--sandbox: %v", err)
	}
	network, err := sandbox.ParseNetwork(f.SandboxNetwork)
	if err != nil {
		return sb, nil, exit.Usagef("--sandbox-network: %v", err)
	}
	var extraEnv, writable []string
	if g.Config != nil {
		extraEnv = g.Config.Sandbox.Env.V
		for _, dir := range g.Config.Sandbox.Writable.V {
			writable = append(writable, g.expandHome(dir))
		}
	}
	tmp, err := os.MkdirTemp("", "agentteam-")
	if err != nil {
		return sb, nil, fmt.Errorf("make the agents' temp dir: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	sb = tools.Sandbox{
		Network:  network,
		Env:      sandbox.Environ(os.Environ(), extraEnv, []string{g.APIKeyEnv(), DefaultKeyEnv}),
		Writable: writable,
		Hidden:   g.hidden(),
		TempDir:  tmp,
	}
	if mode == sandbox.ModeOff {
		sb.Reason = "--sandbox off"
		return sb, cleanup, nil
	}
	if err := sandbox.Check(ctx, network); err != nil {
		if mode == sandbox.ModeRequired {
			cleanup()
			return sb, nil, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("--sandbox required, but commands cannot be sandboxed here: %v", err)}
		}
		sb.Reason = err.Error()
		fmt.Fprintf(errOut, "sandbox: off (%s); commands run unconfined (--sandbox required refuses to start instead)\n", sb.Reason)
		return sb, cleanup, nil
	}
	sb.On = true
	return sb, cleanup, nil
}

// usersEnv names the users file of serve's --users; on a machine that
// runs both, the team's commands cannot read it.
const usersEnv = "AGENTTEAM_NATS_USERS"

// hidden are the files and directories commands cannot read: the
// person's credentials, agentteam's own user config (it may hold keys)
// and state directory (the NATS credentials serve makes and clients of
// this host find there, the trusted projects, the workspaces' records),
// the NATS credentials and TLS key files agentteam is told of, and what
// [sandbox] read_hidden adds.
func (g *GlobalOptions) hidden() []string {
	hidden := sandbox.Credentials(g.Getenv)
	if p := config.UserPath(g.Getenv); p != "" {
		hidden = append(hidden, filepath.Dir(p))
	}
	if dir, err := natsconn.CredsDir(g.Getenv); err == nil {
		hidden = append(hidden, dir)
	}
	for _, name := range []string{natsconn.EnvCreds, natsconn.EnvKey, usersEnv} {
		if p := g.Getenv(name); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				hidden = append(hidden, abs)
			}
		}
	}
	if g.Config != nil {
		for _, p := range g.Config.Sandbox.ReadHidden.V {
			hidden = append(hidden, g.expandHome(p))
		}
	}
	return hidden
}

// expandHome is path with a leading ~/ the person's home.
func (g *GlobalOptions) expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return filepath.Join(g.Getenv("HOME"), rest)
	}
	return path
}

// CheckPool refuses pool bounds no team can run with (bad usage).
func CheckPool(g *GlobalOptions) error {
	if g.MaxWorkers < 1 {
		return exit.Usagef("--max-workers must be at least 1")
	}
	if g.MaxQueue < 0 {
		return exit.Usagef("--max-queue must not be negative")
	}
	return nil
}

// Options are the team Options the global and team flags describe.
func (f TeamFlags) Options(g *GlobalOptions, ws *workspace.Workspace, models models.Models) team.Options {
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
		Isolation:       f.Isolation,
		Worker:          hosts.Options{GitRemote: f.GitRemote},
		Budget:          f.Budget,
		Instructions:    instructionsLoader(g),
		Hooks:           g.hooks(ws),
	}
}

// instructionsLoader reads the agents' AGENTS.md files: the person's own
// beside their config file, and the project's, with [context]'s fallbacks.
func instructionsLoader(g *GlobalOptions) *agentsmd.Loader {
	opts := agentsmd.Options{Home: g.Getenv("HOME")}
	if p := config.UserPath(g.Getenv); p != "" {
		opts.UserDir = filepath.Dir(p)
	}
	if c := g.Config; c != nil {
		opts.Fallbacks, opts.MaxBytes = c.Context.Files.V, c.Context.MaxBytes.V
	}
	return agentsmd.New(opts)
}

// baseMode is the permission mode before an untrusted project file's:
// the flag, else the files', else the command's default (chat asks; run,
// with nobody to ask, runs what no rule refuses).
func (f TeamFlags) baseMode(g *GlobalOptions, chat bool) string {
	switch {
	case f.PermissionMode != "":
		return f.PermissionMode
	case g.Config != nil && g.Config.Permissions.Mode.IsSet():
		return string(g.Config.Permissions.Mode.V)
	case chat:
		return string(permission.ModeAsk)
	}
	return string(permission.ModeYolo)
}

// heldModeApplies reports whether an untrusted project file's mode is
// used: no flag says one, and it asks at least whenever the mode it
// replaces would.
func (f TeamFlags) heldModeApplies(g *GlobalOptions, chat bool) bool {
	if g.Config == nil || !g.Config.Held.Mode.IsSet() || f.PermissionMode != "" {
		return false
	}
	return config.AtLeastAsStrict(g.Config.Held.Mode.V, permission.Mode(f.baseMode(g, chat)))
}

// UntrustedNote is one sentence saying what an untrusted project file
// said that this run ignores, and how to trust it; "" when nothing was.
func (f TeamFlags) UntrustedNote(g *GlobalOptions, chat bool) string {
	if g.Config == nil {
		return ""
	}
	h := g.Config.Held
	// A mode a flag overrides, or one that applies, is not worth a word.
	lines := h.Lines(h.Mode.IsSet() && f.PermissionMode == "" && !f.heldModeApplies(g, chat))
	if len(lines) == 0 {
		return ""
	}
	why := ""
	if h.Problem != nil {
		why = " (" + h.Problem.Error() + ")"
	}
	return fmt.Sprintf("the project file %s is not trusted%s, so this ignores its %s; agentteam trust shows them and applies them",
		config.ProjectPath(g.Workspace), why, strings.Join(lines, ", "))
}
