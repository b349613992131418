package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/ui/progress"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// RunOptions are the inputs of `agentteam run`.
type RunOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	launch.TeamFlags
	Prompt  string
	Timeout time.Duration
	// Poll is the backstop interval for waking on inbox changes.
	Poll time.Duration
	// AutoClaim gives idle teammates claimable tasks from the board.
	AutoClaim bool
	// Placement bounds, on a team across hosts, how long a spawn waits for
	// a worker with its labels.
	Placement time.Duration
}

// newRunCmd builds `agentteam run`; runF, when not nil, replaces runRun.
func newRunCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "run PROMPT | -",
		Short: "Run the lead on a prompt headless until the team settles; print its final answer",
		Long: `Run the lead on PROMPT (or on standard input with "-") until the team settles: the lead has answered,
no teammate is queued or working, and nobody has unread messages. Teammates are then shut down and the
lead's final answer is printed on stdout. Progress goes to stderr (or JSONL events to stdout with --json).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exit.Usagef("run needs a prompt: agentteam run \"what the team should do\" (or - to read it from stdin)")
			}
			opts.Prompt = strings.Join(args, " ")
			if opts.Prompt == "-" {
				data, err := io.ReadAll(opts.IO.In)
				if err != nil {
					return fmt.Errorf("read the prompt from stdin: %w", err)
				}
				opts.Prompt = string(data)
			}
			if strings.TrimSpace(opts.Prompt) == "" {
				return exit.Usagef("the prompt is empty")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(c.Context(), opts)
		},
	}
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "bound the whole run (e.g. 10m); exit 3 when it expires")
	launch.AddTeamFlags(c.Flags(), &opts.TeamFlags)
	c.Flags().BoolVar(&opts.AutoClaim, "auto-claim", false, "give an idle teammate the next claimable task on the board that fits its role")
	c.Flags().DurationVar(&opts.Placement, "placement-timeout", hosts.DefaultPlacement, "on a team across hosts (--store nats://…), how long a spawn waits for a worker with its labels before it fails")
	return c
}

func runRun(ctx context.Context, opts *RunOptions) (err error) {
	printed := progress.New(opts.IO.Out, opts.IO.Err, opts.JSON, opts.Quiet)
	if opts.JSON {
		// A run that fails still closes its JSONL: a reader waits for a last line.
		defer func() {
			if err != nil {
				_ = printed.Write(endEvent(ctx, err))
			}
		}()
	}
	final, usage, err := runLead(ctx, opts, leadRun{onEvent: printed.Event, hardStop: true})
	if err != nil {
		return err
	}
	if opts.JSON {
		// The closing answer carries what each agent used and cost.
		return printed.Write(event.Event{Time: time.Now().UTC(), Agent: inbox.LeadName,
			Payload: event.Answer{Text: final, Tokens: usage.Agents[0].Tokens, Usage: &usage}})
	}
	_, err = fmt.Fprintln(opts.IO.Out, strings.TrimRight(final, "\n"))
	return err
}

// leadRun is how a caller of runLead hears of the run: run prints, mcp
// serve sends progress notifications.
type leadRun struct {
	onEvent func(event.Event)
	// hardStop ends the process when --timeout has passed and the team has
	// not ended, and at a second interrupt: a command's run owns its process,
	// a server's does not.
	hardStop bool
	// person: someone answers asks (mcp serve's client), as in chat.
	person bool
	// opened, when not nil, is told of the team once it runs, and of nil
	// once it is closed.
	opened func(*team.Team)
}

// runLead runs the lead on opts.Prompt in the workspace until the team
// settles, as `agentteam run` does, and returns its final answer and what
// the team used; an error is the run's end as the person reads it.
func runLead(ctx context.Context, opts *RunOptions, how leadRun) (string, registry.TeamUsage, error) {
	var none registry.TeamUsage
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return "", none, err
	}
	if err := launch.CheckPool(opts.GlobalOptions); err != nil {
		return "", none, err
	}
	if err := opts.CheckBounds(); err != nil {
		return "", none, err
	}
	if err := opts.CheckIsolation(); err != nil {
		return "", none, err
	}
	if err := opts.CheckGitRemote(); err != nil {
		return "", none, err
	}
	st, err := launch.OpenStores(ctx, opts.GlobalOptions, ws)
	if err != nil {
		return "", none, err
	}
	defer st.Close() // after tm.Close, which is deferred later
	// Retries go to the event log and progress like the team's own events,
	// but through a log of their own: with --resume, teammates start inside
	// team.Open and may retry before run has the team.
	retries := st.Events(ws, how.onEvent)
	modelSet, _, err := launch.NewModels(opts.GlobalOptions, func(r llm.Retry) { retries.Emit(event.RetryEvent(r)) })
	if err != nil {
		return "", none, err
	}
	// Before the run's clock starts: the check runs a process.
	sb, cleanup, err := opts.OpenSandbox(ctx, opts.GlobalOptions, opts.IO.Err)
	if err != nil {
		return "", none, err
	}
	defer cleanup() // after tm.Close, which is deferred later
	if how.hardStop {
		defer exit.InterruptTwice(ctx)() // chat's second ctrl+c is its own: it leaves
	}
	runCtx := ctx
	cancel := func() {}
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		if how.hardStop {
			defer exit.HardStop(opts.Timeout+exit.HardGrace, exit.Timeout, fmt.Sprintf(
				"the run timed out after %s and had not ended %s later: stopped at once; the team's files under %s show where it stopped",
				opts.Timeout, exit.HardGrace, ws.StatePath()))()
		}
	}
	defer cancel()
	topts := opts.Options(opts.GlobalOptions, ws, modelSet)
	topts.OnEvent, topts.PollInterval, topts.AutoClaim = how.onEvent, opts.Poll, opts.AutoClaim
	if topts.Permissions, err = opts.Permissions(opts.GlobalOptions, how.person); err != nil {
		return "", none, err
	}
	if note := opts.UntrustedNote(opts.GlobalOptions, how.person); note != "" {
		fmt.Fprintln(opts.IO.Err, note)
	}
	topts.Sandbox = sb
	mcpServers := launch.StartMCP(ctx, opts.GlobalOptions, opts.IO.Err)
	defer mcpServers.Close()
	topts.MCP = mcpServers
	st.Apply(&topts)
	if err := st.Hosts(ctx, &topts); err != nil {
		return "", none, err
	}
	topts.Worker.Placement, topts.RoleLabels = opts.Placement, roleLabels(opts.GlobalOptions)
	topts.Worker.KeyEnv = opts.APIKeyEnv() // kept out of git's push of the lead's commit for workers
	// Stopped after tm.Close: a NATS server gone away does not hold the
	// run's ending, whether its deadline ended it or a fault (the owner
	// lease lost with the server) halted the team.
	ending, endNow := context.WithCancel(runCtx)
	defer endNow()
	defer st.CutWhenGone(ending, launch.StoreGoneGrace)()
	tm, err := team.Open(runCtx, topts)
	if err != nil {
		if _, e := stopped(ctx, runCtx, opts.Timeout, ws); e != nil {
			return "", none, e // the deadline or the interrupt came while the team opened
		}
		return "", none, err
	}
	defer closeTeam(tm)
	if how.opened != nil {
		how.opened(tm)
		defer how.opened(nil) // before tm.Close
	}
	go func() {
		select {
		case <-tm.Halted():
			endNow()
		case <-ending.Done():
		}
	}()

	final, err := tm.Run(runCtx, opts.Prompt)
	if err != nil {
		// The run's own deadline decides, not the wording of the lead's error.
		if why, e := stopped(ctx, runCtx, opts.Timeout, ws); e != nil {
			tm.Abort(why)
			return "", none, e
		}
		switch {
		case errors.As(err, new(*models.BudgetError)):
			tm.Abort(err.Error())
			return "", none, &exit.Error{Code: exit.Budget, Err: err}
		case errors.As(err, new(*fault.StorageError)):
			tm.Abort(err.Error())
			return "", none, &exit.Error{Code: exit.Failure, Err: err}
		default:
			tm.Abort(err.Error())
			return "", none, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the lead stopped: %w", err)}
		}
	}
	return final, tm.Models().Usage(), nil
}

// runEnd is the closing line of a `run --json` that ended without an
// answer: why (timeout, budget, interrupted, error), the exit code and the sentence.
type runEnd struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"` // "end"
	Outcome  string    `json:"outcome"`
	ExitCode int       `json:"exit_code"`
	Detail   string    `json:"detail"`
}

func endEvent(ctx context.Context, err error) runEnd {
	e := runEnd{Time: time.Now().UTC(), Kind: "end", Outcome: "error", ExitCode: exit.Code(err), Detail: err.Error()}
	switch {
	case e.ExitCode == exit.Timeout:
		e.Outcome = "timeout"
	case e.ExitCode == exit.Budget:
		e.Outcome = "budget"
	case ctx.Err() != nil:
		e.Outcome = "interrupted"
	}
	return e
}

// stopped is how a run that its deadline (exit 3) or an interrupt cut
// short ends, and what its teammates are told; nil when neither came.
func stopped(ctx, runCtx context.Context, timeout time.Duration, ws *workspace.Workspace) (string, *exit.Error) {
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Sprintf("the run timed out after %s", timeout), &exit.Error{Code: exit.Timeout,
			Err: fmt.Errorf("the run timed out after %s; the team's files under %s show where it stopped", timeout, ws.StatePath())}
	case ctx.Err() != nil:
		return "the run was interrupted", &exit.Error{Code: exit.Failure, Err: fmt.Errorf("interrupted")}
	}
	return "", nil
}

// closeTeam closes tm, waiting at most team.CloseTimeout for it to stop.
func closeTeam(tm *team.Team) error {
	ctx, cancel := context.WithTimeout(context.Background(), team.CloseTimeout)
	defer cancel()
	return tm.Close(ctx)
}
