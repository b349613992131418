package cmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentteam/agentteam/internal/tui"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team"
)

// ChatOptions are the inputs of `agentteam chat`.
type ChatOptions struct {
	*GlobalOptions
	TeamFlags
	IO     IOStreams
	NoAuto bool
}

// newChatCmd builds `agentteam chat`; runF, when not nil, replaces runChat.
func newChatCmd(g *GlobalOptions, streams IOStreams, runF func(*ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "chat",
		Short: "The interactive team TUI: talk to the lead and watch the team work",
		Long: `Open the interactive team TUI: talk to the lead, watch every teammate's status and the messages
between agents, focus a teammate (tab) to read its conversation and write to its inbox. /help lists the
commands, ? the keys. ctrl+c quits and stops the teammates.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runChat(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.NoAuto, "no-auto", false, "the lead answers only you, not by itself when teammates report (/auto on changes it)")
	addTeamFlags(c.Flags(), &opts.TeamFlags)
	return c
}

func runChat(ctx context.Context, opts *ChatOptions) error {
	in, inOK := opts.IO.In.(*os.File)
	out, outOK := opts.IO.Out.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf(
			"chat needs a terminal (standard input and output are not one): use agentteam run \"...\" to run the team headless")}
	}
	if err := checkPool(opts.GlobalOptions); err != nil {
		return err
	}
	if err := opts.checkIsolation(); err != nil {
		return err
	}
	ws, err := openWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	bridge := tui.NewBridge()
	screen := tui.Options{Workspace: ws.Root, Auto: !opts.NoAuto, HasModel: true}
	var models team.Models
	set, lead, err := newModels(opts.GlobalOptions, bridge.Retry)
	if err != nil {
		// Without a key the TUI still opens: the team's files can be read and written.
		models = team.OneModel(noModel{err: err}, "no model")
		screen.HasModel, screen.Notice, screen.ModelName = false, tui.NoModelNotice(opts.keyEnv()), "no model"
	} else {
		models = set
		screen.Notice, screen.ModelName = chatWelcome(opts.Demo), lead.Label()
	}
	screen.KeyEnv = opts.keyEnv()
	topts := opts.options(opts.GlobalOptions, ws, models)
	if topts.Permissions, err = opts.permissions(opts.GlobalOptions, true); err != nil {
		return err
	}
	sb, cleanup, err := opts.sandbox(ctx, opts.GlobalOptions, opts.IO.Err)
	if err != nil {
		return err
	}
	defer cleanup()
	screen.Sandbox = "sandbox: " + sb.State()
	topts.Sandbox = sb
	return tui.Run(ctx, tui.Config{
		Team:   topts,
		Bridge: bridge,
		Screen: screen,
		In:     in,
		Out:    out,
	})
}

func chatWelcome(demo bool) string {
	if demo {
		return "Offline demo model. Try: spawn alice as programmer; spawn bob as tester — then tab to focus a teammate, /help for commands."
	}
	return "Talk to the lead: say what the team should do. tab focuses a teammate, /help lists the commands, ? the keys."
}

// noModel stands in when there is no key: a teammate spawned by hand fails
// with the sentence that says how to set one.
type noModel struct{ err error }

func (n noModel) Complete(ctx context.Context, req loop.Request) (loop.Response, error) {
	return loop.Response{}, n.err
}
