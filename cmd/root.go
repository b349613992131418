// Package cmd holds agentteam's commands: each one fills an Options struct
// from its flags and calls a plain run function that tests call too.
package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
)

// IOStreams are the command's standard streams, injected so tests use buffers.
type IOStreams struct {
	In       io.Reader
	Out, Err io.Writer
}

// NewRootCmd builds the command tree writing to io.
func NewRootCmd(io IOStreams, getenv func(string) string) *cobra.Command {
	return newRootCmd(io, getenv, rootOpts{})
}

// rootOpts replace commands' run functions: a non-nil hook receives the
// Options its command filled instead of running it (tests check flag parsing
// this way, without a workspace or a model).
type rootOpts struct {
	run     func(*RunOptions) error
	chat    func(*ChatOptions) error
	team    func(*TeamOptions) error
	tasks   func(*TasksOptions) error
	inbox   func(*InboxOptions) error
	send    func(*SendOptions) error
	version func(*VersionOptions) error
	config  func(*ConfigOptions) error
	models  func(*ModelsOptions) error
	merge   func(*MergeOptions) error
	diff    func(*DiffOptions) error
	// The permission asks' commands.
	requests func(*RequestsOptions) error
	approve  func(*ApproveOptions) error
	deny     func(*DenyOptions) error
	sessions func(*SessionsOptions) error
	serve    func(*ServeOptions) error
	worker   func(*WorkerOptions) error
	trust    func(*TrustOptions) error
	mcp      func(*MCPOptions) error
	adopt    func(*AdoptOptions) error
}

func newRootCmd(io IOStreams, getenv func(string) string, hooks rootOpts) *cobra.Command {
	if getenv == nil {
		getenv = os.Getenv
	}
	g := &launch.GlobalOptions{Getenv: getenv}
	root := &cobra.Command{
		Use:   "agentteam",
		Short: "A lead agent and its teammates, working together through plain files",
		Long: `A lead agent and its teammates, working together through plain files.

agentteam alone opens the chat with the lead (agentteam chat); the commands below do the rest.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          unknownCommand,
		RunE: func(c *cobra.Command, args []string) error {
			return c.Help()
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.Usagef("%v (see %s --help)", err, c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.Workspace, "workspace", envOr(getenv, "AGENTTEAM_WORKSPACE", "."), "the team's working directory (env AGENTTEAM_WORKSPACE)")
	pf.StringVar(&g.Model, "model", envOr(getenv, "AGENTTEAM_MODEL", launch.DefaultModel), "model name (env AGENTTEAM_MODEL)")
	pf.StringVar(&g.BaseURL, "base-url", getenv("OPENAI_BASE_URL"), "OpenAI-compatible API base URL (env OPENAI_BASE_URL)")
	pf.IntVar(&g.MaxWorkers, "max-workers", 5, "at most N teammates run model turns at the same time")
	pf.IntVar(&g.MaxQueue, "max-queue", 50, "spawns that may wait for a worker; beyond it a spawn is refused")
	pf.BoolVar(&g.Demo, "demo", false, "use the built-in offline model (no key, no network)")
	pf.BoolVar(&g.JSON, "json", false, "machine-readable output on stdout")
	pf.BoolVar(&g.Quiet, "quiet", false, "print only the result")
	pf.StringVar(&g.Store, "store", getenv(launch.StoreEnv), "where the team's inboxes, registry, task board and events live: file (the workspace, the default), nats://HOST:PORT[/TEAM], or tls://HOST:PORT[/TEAM] for TLS only, its CA in AGENTTEAM_NATS_CA (env AGENTTEAM_STORE)")
	pf.BoolVar(&g.NoStream, "no-stream", false, "ask the model server for whole replies instead of streamed ones")

	runCmd, chatCmd := newRunCmd(g, io, hooks.run), newChatCmd(g, io, hooks.chat)
	// The commands that run a team read the config files under their flags.
	launch.WithConfig(g, runCmd)
	launch.WithConfig(g, chatCmd)
	workerCmd := newWorkerCmd(g, io, hooks.worker)
	launch.WithConfig(g, workerCmd)
	root.AddCommand(
		runCmd,
		newTeamCmd(g, io, hooks.team),
		newTasksCmd(g, io, hooks.tasks),
		newInboxCmd(g, io, hooks.inbox),
		newSendCmd(g, io, hooks.send),
		newVersionCmd(g, io, hooks.version),
		chatCmd,
		newConfigCmd(g, io, hooks.config),
		newModelsCmd(g, io, hooks.models),
		newMergeCmd(g, io, hooks.merge),
		newDiffCmd(g, io, hooks.diff),
		newRequestsCmd(g, io, hooks.requests),
		newApproveCmd(g, io, hooks.approve),
		newDenyCmd(g, io, hooks.deny),
		newSessionsCmd(g, io, hooks.sessions),
		newServeCmd(g, io, hooks.serve),
		newAdoptCmd(g, io, hooks.adopt),
		workerCmd,
		newTrustCmd(g, io, hooks.trust),
		newMCPCmd(g, io, hooks.mcp),
	)
	return root
}

// Execute runs agentteam with the process's arguments and returns the exit code.
func Execute() (code int) {
	streams := IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(streams.Err, "agentteam: internal error: %v (please report this)\n", r)
			code = exit.Failure
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCmd(streams, nil)
	root.SetArgs(defaultToChat(root, os.Args[1:]))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	return Report(streams.Err, err)
}

// defaultToChat is args with "chat" first when they name no command and
// ask for no help: agentteam alone opens the chat, as claude, codex and
// crush do, and takes chat's flags (agentteam --demo --resume).
func defaultToChat(root *cobra.Command, args []string) []string {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "--" {
			return args
		}
	}
	// A copy of the flags, so this look changes nothing the real parse sees.
	fs := pflag.NewFlagSet("agentteam", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsWhitelist.UnknownFlags = true
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		c := *f
		c.Value = &inertValue{f.Value.Type(), f.NoOptDefVal != ""}
		fs.AddFlag(&c)
	})
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return args // a command, or a word cobra will call unknown
	}
	return append([]string{"chat"}, args...)
}

// inertValue takes any value of a flag and keeps none.
type inertValue struct {
	typ    string
	isBool bool
}

func (v *inertValue) String() string   { return "" }
func (v *inertValue) Set(string) error { return nil }
func (v *inertValue) Type() string     { return v.typ }
func (v *inertValue) IsBoolFlag() bool { return v.isBool }

// Report prints err as one sentence and returns its exit code.
func Report(w io.Writer, err error) int {
	fmt.Fprintf(w, "agentteam: %s\n", err.Error())
	return exit.Code(err)
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return exit.Usagef("%s takes no arguments, got %q (see %s --help)", c.CommandPath(), args[0], c.CommandPath())
	}
	return nil
}

// unknownCommand refuses a word that names no command: cobra hands the root
// its unknown words as arguments, which "takes no arguments" would misname.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		return exit.Usagef("unknown command %q: did you mean %q? (see %s --help)", args[0], s[0], c.CommandPath())
	}
	return exit.Usagef("unknown command %q (see %s --help)", args[0], c.CommandPath())
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return exit.Usagef("%s takes at most %d argument(s), got %d (see %s --help)", c.CommandPath(), n, len(args), c.CommandPath())
		}
		return nil
	}
}
