package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/ui/linechat"
	"github.com/agentteam/agentteam/internal/ui/progress"
	"github.com/agentteam/agentteam/internal/ui/tui"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/picker"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/workspace"
)

// ChatOptions are the inputs of `agentteam chat`.
type ChatOptions struct {
	*launch.GlobalOptions
	launch.TeamFlags
	IO     IOStreams
	NoAuto bool
	// Watch opens the chat on the team without running it, as it opens
	// by itself when another process runs the team.
	Watch bool
	// Plain runs the chat in lines even on a terminal that could run the TUI.
	Plain bool
	// ResumeID, with --resume, is the session to bring back (agentteam
	// sessions lists them); --resume alone offers a picker when there are
	// earlier sessions.
	ResumeID string
}

// newChatCmd builds `agentteam chat`; runF, when not nil, replaces runChat.
func newChatCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Short: "The interactive team TUI: talk to the lead and watch the team work",
		Long: `Open the interactive team TUI: talk to the lead, watch every teammate's status and the messages
between agents, focus a teammate (tab) to read its conversation and write to its inbox. /help lists the
commands, ? the keys. ctrl+c quits and stops the teammates.

Where the TUI cannot run (TERM=dumb or unset, standard input or output not a terminal) or with --plain
or [ui] plain = true in a config file, chat runs in lines: a "lead> " prompt, the lead's reply as plain
text, one line per tool call and team event, permission asks answered with y, a or n; ctrl+c interrupts
the lead's turn, a second leaves, as does the end of input.

While another process runs the team (a run, another chat, agentteam mcp serve's team_run), chat watches
it: the team, its messages, and the lead's and teammates' steps as the event log has them; your lines go
to the lead's inbox, /send to a teammate's, and the asks for you can be answered. --watch does so even
when no process runs it.

--resume continues the team and the lead's conversation; with earlier conversations it first lets you
pick one. --resume ID goes straight to that one (ids from agentteam sessions): it becomes the current
conversation, the one it replaces is kept as an earlier one.`,
		Use: "chat [--resume [ID]]",
		Args: func(c *cobra.Command, args []string) error {
			if opts.Resume && opts.Watch {
				return exit.Usagef("chat --watch cannot --resume: a watching chat runs no lead of its own")
			}
			if !opts.Resume || len(args) == 0 {
				return noArgs(c, args)
			}
			if len(args) > 1 {
				return exit.Usagef("chat --resume takes one session id, got %d words (see agentteam sessions)", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ResumeID = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runChat(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.Plain, "plain", false, "a line-mode chat (prompt, plain text, no escape sequences) instead of the full-screen TUI")
	c.Flags().BoolVar(&opts.Watch, "watch", false, "watch the team without running it, even when no other process runs it (chat watches by itself when one does)")
	c.Flags().BoolVar(&opts.NoAuto, "no-auto", false, "the lead answers only you, not by itself when teammates report (/auto on changes it)")
	launch.AddTeamFlags(c.Flags(), &opts.TeamFlags)
	return c
}

func runChat(ctx context.Context, opts *ChatOptions) error {
	if opts.ResumeID != "" {
		// Checked before the terminal, so a wrong id says so wherever it is typed.
		if err := checkResumeID(opts.GlobalOptions, opts.ResumeID); err != nil {
			return err
		}
	}
	in, _ := opts.IO.In.(*os.File)
	out, _ := opts.IO.Out.(*os.File)
	lineMode := linechat.Terminal{Term: opts.Getenv("TERM"), InTTY: isTerminal(in), OutTTY: isTerminal(out), Plain: opts.Plain}.Reason()
	if err := opts.checkChatFlags(); err != nil {
		return err
	}
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	if watched, err := watchIfRunning(ctx, opts, ws, lineMode); watched || err != nil {
		return err
	}
	if opts.Resume && opts.ResumeID == "" {
		list, err := sessions.List(ws)
		if err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
		switch {
		case len(list) <= 1 && (len(list) == 0 || list[0].Current): // nothing earlier to pick from
		default:
			// Refused now rather than after the person has chosen.
			if err := checkNotRunning(ctx, opts.GlobalOptions, ws); err != nil {
				return err
			}
			var id string
			if lineMode != "" { // a numbered choice in lines
				id, err = linechat.PickSession(ctx, opts.IO.In, opts.IO.Out, list, !isTerminal(in) || !isTerminal(out))
			} else {
				id, err = picker.Pick(ctx, in, out, list)
			}
			if err != nil {
				return &exit.Error{Code: exit.Failure, Err: err}
			}
			if id == "" {
				fmt.Fprintln(opts.IO.Err, "no conversation chosen: nothing opened")
				return nil
			}
			opts.ResumeID = id
		}
	}
	if isTerminal(in) && isTerminal(out) {
		if err := launch.AskTrust(opts.GlobalOptions, in, out); err != nil {
			return err
		}
	}
	st, err := launch.OpenStores(ctx, opts.GlobalOptions, ws)
	if err != nil {
		return err
	}
	defer st.Close() // after tui.Run has closed the team
	br := bridge.New()
	screen := tui.Options{Workspace: ws.Root, Auto: !opts.NoAuto, HasModel: true}
	retry, lines := br.Retry, linechat.New(opts.IO.Out, progress.Line)
	if lineMode != "" {
		retry = lines.Retry
	}
	var modelSet models.Models
	set, lead, err := launch.NewModels(opts.GlobalOptions, retry)
	if err != nil {
		// Without a key the TUI still opens: the team's files can be read and written.
		modelSet = models.OneModel(noModel{err: err}, "no model")
		screen.HasModel, screen.Notice, screen.ModelName = false, tui.NoModelNotice(opts.APIKeyEnv()), "no model"
	} else {
		modelSet = set
		screen.Notice, screen.ModelName = chatWelcome(opts.Demo, lineMode != ""), lead.Label()
	}
	screen.KeyEnv = opts.APIKeyEnv()
	topts := opts.Options(opts.GlobalOptions, ws, modelSet)
	if opts.ResumeID != sessions.CurrentID {
		topts.RestoreSession = opts.ResumeID
	}
	// A person at a terminal says whether to go on past the budget; a
	// script cannot foresee when it is reached, so its team stops as a run's.
	topts.Budget.Ask = isTerminal(in)
	if topts.Permissions, err = opts.Permissions(opts.GlobalOptions, true); err != nil {
		return err
	}
	if note := opts.UntrustedNote(opts.GlobalOptions, true); note != "" {
		// Before the screen takes the terminal, and on it, which hides this line.
		fmt.Fprintln(opts.IO.Err, note)
		if lineMode == "" {
			screen.Notice += "\n" + note
		}
	}
	sb, cleanup, err := opts.OpenSandbox(ctx, opts.GlobalOptions, opts.IO.Err)
	if err != nil {
		return err
	}
	defer cleanup()
	screen.Sandbox = "sandbox: " + sb.State()
	topts.Sandbox = sb
	mcpServers := launch.StartMCP(ctx, opts.GlobalOptions, opts.IO.Err)
	defer mcpServers.Close()
	topts.MCP = mcpServers
	st.Apply(&topts)
	if err := st.Hosts(ctx, &topts); err != nil { // on NATS, spawns go through the work queue
		return err
	}
	topts.Worker.KeyEnv = opts.APIKeyEnv() // kept out of git's push of the lead's commit for workers
	if lineMode != "" {
		return runLineChat(ctx, opts, lines, lineMode, topts, screen)
	}
	return tui.Run(ctx, tui.Config{
		Team:   topts,
		Bridge: br,
		Screen: screen,
		In:     in,
		Out:    out,
	})
}

// runLineChat runs the chat in lines (why says why). Its first ctrl+c
// interrupts the lead's turn instead of ending the command: the line chat
// takes SIGINT itself, and only SIGTERM ends it from outside.
func runLineChat(ctx context.Context, opts *ChatOptions, lines *linechat.Chat, why string, topts team.Options, screen tui.Options) error {
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)
	ctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM)
	defer stop()
	in, _ := opts.IO.In.(*os.File)
	out, _ := opts.IO.Out.(*os.File)
	return lines.Run(ctx, linechat.Config{
		Team:       topts,
		HasModel:   screen.HasModel,
		Auto:       screen.Auto,
		Notice:     fmt.Sprintf("agentteam chat in lines (%s) · %s · %s · %s", why, screen.ModelName, screen.Workspace, screen.Sandbox) + "\n" + screen.Notice,
		In:         opts.IO.In,
		Echo:       !isTerminal(in) || !isTerminal(out), // a terminal's echo reaches a terminal only
		Script:     !isTerminal(in),
		Interrupts: intr,
	})
}

// checkChatFlags refuses flags that cannot work together, before anything opens.
func (opts *ChatOptions) checkChatFlags() error {
	for _, check := range []func() error{
		func() error { return launch.CheckPool(opts.GlobalOptions) },
		opts.CheckBounds, opts.CheckIsolation, opts.CheckGitRemote,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func isTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// checkResumeID refuses an id that names no session of this workspace.
func checkResumeID(g *launch.GlobalOptions, id string) error {
	ws, err := launch.OpenWorkspace(g)
	if err != nil {
		return err
	}
	list, err := sessions.List(ws)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	for _, s := range list {
		if s.ID == id {
			return nil
		}
	}
	return exit.Usagef("no session %q in %s: agentteam sessions lists them", id, ws.Root)
}

func chatWelcome(demo, lines bool) string {
	switch {
	case demo && lines:
		return "Offline demo model. Try: spawn alice as programmer; spawn bob as tester."
	case demo:
		return "Offline demo model. Try: spawn alice as programmer; spawn bob as tester — then tab to focus a teammate, /help for commands."
	case lines:
		return "Talk to the lead: say what the team should do."
	}
	return "Talk to the lead: say what the team should do. tab focuses a teammate, /help lists the commands, ? the keys."
}

// noModel stands in when there is no key: a teammate spawned by hand fails
// with the sentence that says how to set one.
type noModel struct{ err error }

func (n noModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{}, n.err
}

// checkNotRunning refuses, in the sentence opening the team would give,
// a team another process runs: the workspace's owner lock, or on a NATS
// store its owner lease (taken and given back at once).
func checkNotRunning(ctx context.Context, g *launch.GlobalOptions, ws *workspace.Workspace) error {
	if st, _ := launch.StoreURL(g); st == "" || st == "file" {
		return registry.CheckNotRunning(ws.TeamDir())
	}
	s, err := launch.OpenStores(ctx, g, ws)
	if err != nil {
		return err
	}
	defer s.Close()
	release, _, err := s.Owner.Acquire(ctx)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	release()
	return nil
}
