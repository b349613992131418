package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/ui/progress"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/tools"
)

// WorkerOptions are the inputs of `agentteam worker`.
type WorkerOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	launch.TeamFlags
	// Labels are what this worker offers: it takes only spawns whose labels it all has.
	Labels []string
	// ID names the worker in the registry; "" is HOST-PID.
	ID string
}

// newWorkerCmd builds `agentteam worker`; runF, when not nil, replaces runWorker.
func newWorkerCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "worker --store nats://HOST:PORT/TEAM --workspace DIR",
		Short: "Run teammates of a team on a NATS server here, as the lead's spawns ask",
		Long: `Take spawn requests from the work queue of a team on a NATS server (--store nats://HOST:PORT/TEAM)
and run their teammates in this process, at most --max-workers model turns at once, in --workspace DIR
(this host's clone of the work). Each teammate talks to its model with this host's own config and key,
and shares the team's inboxes, registry, task board and events on the server. With --labels, only
spawns asking for these labels (or none) are taken. A teammate in a worktree (isolation worktree) works on
the branch agentteam/NAME of this clone, which is pushed to the team's git remote (--git-remote, default
origin) when it reports and when the worker stops, never forced; the lead's merge and diff fetch it from
there. It runs until interrupted (Ctrl-C, SIGTERM); its teammates then end shut down, and the lead is told.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runWorker(c.Context(), opts)
		},
	}
	launch.AddTeamFlags(c.Flags(), &opts.TeamFlags)
	c.Flags().StringSliceVar(&opts.Labels, "labels", nil, "what this worker offers, e.g. gpu,linux: it takes spawns whose labels it all has")
	c.Flags().StringVar(&opts.ID, "id", "", "this worker's id in the registry (letters, digits, '-', '_'; default HOST-PID)")
	return c
}

func runWorker(ctx context.Context, opts *WorkerOptions) error {
	for _, l := range opts.Labels {
		if err := tools.CheckLabel(l); err != nil {
			return exit.Usagef("--labels: %v", err)
		}
	}
	if opts.ID != "" && !validWorkerID(opts.ID) {
		return exit.Usagef("--id %q: use 1 to 64 letters, digits, '-' and '_'", opts.ID)
	}
	if opts.Resume {
		return exit.Usagef("a worker takes no --resume: the lead's run resumes the team")
	}
	if err := opts.CheckGitRemote(); err != nil {
		return err
	}
	raw, err := launch.StoreURL(opts.GlobalOptions)
	if err != nil {
		return err
	}
	if spec, err := launch.ParseStore(raw); err != nil {
		return err
	} else if spec.Server == "" {
		return exit.Usagef("a worker serves a team on a NATS server: give --store nats://HOST:PORT/TEAM (or AGENTTEAM_STORE)")
	}
	if err := launch.CheckPool(opts.GlobalOptions); err != nil {
		return err
	}
	if err := opts.CheckBounds(); err != nil {
		return err
	}
	if err := opts.CheckIsolation(); err != nil {
		return err
	}
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RoleWorker)
	if err != nil {
		return err
	}
	defer st.Close() // after tm.Close, deferred later
	printed := progress.New(opts.IO.Out, opts.IO.Err, opts.JSON, opts.Quiet)
	retries := st.Events(ws, printed.Event)
	models, _, err := launch.NewModels(opts.GlobalOptions, func(r llm.Retry) { retries.Emit(event.RetryEvent(r)) })
	if err != nil {
		return err
	}
	sb, cleanup, err := opts.OpenSandbox(ctx, opts.GlobalOptions, opts.IO.Err)
	if err != nil {
		return err
	}
	defer cleanup()
	topts := opts.Options(opts.GlobalOptions, ws, models)
	topts.OnEvent = printed.Event
	if topts.Permissions, err = opts.Permissions(opts.GlobalOptions, false); err != nil {
		return err
	}
	if note := opts.UntrustedNote(opts.GlobalOptions, false); note != "" {
		fmt.Fprintln(opts.IO.Err, note)
	}
	if opts.PermissionDelegate == "" {
		topts.Permissions.Delegate = permgate.DelegateTeam // whoever the lead's process says answers
	}
	// With no mode set here, a teammate runs in the lead's: a chat that asks
	// is not bypassed by this worker's default (yolo, as run's); nor does a
	// lead's yolo run here, which only this worker's person may choose.
	topts.Permissions.FollowMode = opts.PermissionMode == "" && (opts.Config == nil || opts.Config.Permissions.Mode.V == "")
	topts.Sandbox = sb
	mcpServers := launch.StartMCP(ctx, opts.GlobalOptions, opts.IO.Err)
	defer mcpServers.Close()
	topts.MCP = mcpServers
	topts.TeamName = st.Spec.Team
	st.Apply(&topts)
	if err := st.Hosts(ctx, &topts); err != nil {
		return err
	}
	topts.Worker.ID, topts.Worker.Labels = opts.ID, opts.Labels
	topts.Worker.GitRemote, topts.Worker.KeyEnv = opts.GitRemote, opts.KeyEnv
	// The signal ends Serve, which shuts the teammates down; the team's own
	// context must outlive it, or they would stop without a word.
	tm, err := team.OpenWorker(context.WithoutCancel(ctx), topts)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	defer closeTeam(tm)
	labels := "any spawn"
	if len(opts.Labels) > 0 {
		labels = "spawns labelled with at most " + strings.Join(opts.Labels, ", ")
	}
	if !opts.Quiet && !opts.JSON {
		fmt.Fprintf(opts.IO.Err, "worker %s: taking %s of %s, at most %d at once; Ctrl-C stops it\n",
			tm.WorkerID(), labels, st.Where, opts.MaxWorkers)
	}
	return tm.Serve(ctx)
}

// validWorkerID reports whether id can name a worker's heartbeat key.
func validWorkerID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return id != ""
}

// roleLabels are the labels the config files give each role ([roles.NAME]
// labels = […]): what a worker must have to run the role's teammates when
// their spawn names none.
func roleLabels(g *launch.GlobalOptions) map[string][]string {
	if g.Config == nil {
		return nil
	}
	out := map[string][]string{}
	for name, r := range g.Config.Roles {
		if len(r.V.Labels) > 0 {
			out[name] = r.V.Labels
		}
	}
	return out
}
