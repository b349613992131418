package cmd

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/worktree"
)

// captured holds the Options the one command that ran handed to its hook.
type captured struct {
	opts  any
	calls int
}

// executeHooked runs agentteam's command tree in-process with every run
// function replaced by a hook that records its Options: flag parsing is
// tested without a workspace, a model or the binary.
func executeHooked(t *testing.T, env map[string]string, stdin string, args ...string) (*captured, error) {
	t.Helper()
	c := &captured{}
	record := func(o any) error {
		c.opts, c.calls = o, c.calls+1
		return nil
	}
	streams := IOStreams{In: strings.NewReader(stdin), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	root := newRootCmd(streams, func(k string) string { return env[k] }, rootOpts{
		run:     func(o *RunOptions) error { return record(o) },
		chat:    func(o *ChatOptions) error { return record(o) },
		team:    func(o *TeamOptions) error { return record(o) },
		tasks:   func(o *TasksOptions) error { return record(o) },
		inbox:   func(o *InboxOptions) error { return record(o) },
		send:    func(o *SendOptions) error { return record(o) },
		version: func(o *VersionOptions) error { return record(o) },
		merge:   func(o *MergeOptions) error { return record(o) },
		diff:    func(o *DiffOptions) error { return record(o) },
		trust:   func(o *TrustOptions) error { return record(o) },
	})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if c.opts != nil {
		if g := globalsOf(c.opts); g.Getenv == nil {
			t.Errorf("%v: the Options have no Getenv", args)
		}
	}
	return c, err
}

// globalsOf is the GlobalOptions inside any command's Options (a pointer or a value).
func globalsOf(o any) *launch.GlobalOptions {
	return reflect.Indirect(reflect.ValueOf(o)).FieldByName("GlobalOptions").Interface().(*launch.GlobalOptions)
}

// parsed strips what a table cannot spell (streams, functions) from
// captured Options, leaving the values flags, args and env decided.
func parsed(o any) any {
	g := *globalsOf(o)
	g.Getenv = nil
	switch o := o.(type) {
	case *RunOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *ChatOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *TeamOptions:
		v := *o
		v.GlobalOptions, v.IO, v.Now = &g, IOStreams{}, nil
		return v
	case *TasksOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *InboxOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *SendOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *MergeOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *DiffOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	case *VersionOptions:
		v := *o
		v.GlobalOptions, v.IO = &g, IOStreams{}
		return v
	}
	panic(fmt.Sprintf("unknown Options type %T", o))
}

// defaults are the global options with no flag and no environment.
func defaults() *launch.GlobalOptions {
	return &launch.GlobalOptions{Workspace: ".", Model: launch.DefaultModel, MaxWorkers: 5, MaxQueue: 50}
}

func with(change func(g *launch.GlobalOptions)) *launch.GlobalOptions {
	g := defaults()
	change(g)
	return g
}

// teamDefaults are run's and chat's team flags left alone.
var teamDefaults = launch.TeamFlags{
	MaxTurns:        team.DefaultMaxTurns,
	ShutdownTimeout: protocol.DefaultShutdownTimeout,
	PlanTimeout:     protocol.DefaultPlanTimeout,
	HandoffTimeout:  handoff.DefaultTimeout,
	Isolation:       worktree.IsolationNone,
	GitRemote:       "origin",
	Sandbox:         "auto",
	SandboxNetwork:  "on",
}

func TestCommandsFillTheirOptions(t *testing.T) {
	env := map[string]string{
		"AGENTTEAM_WORKSPACE": "/from/env",
		"AGENTTEAM_MODEL":     "env-model",
		"OPENAI_BASE_URL":     "http://env.example/v1",
		// Read by the run functions, never by flag parsing.
		"OPENAI_API_KEY": "sk-not-a-flag",
	}
	fromEnv := with(func(g *launch.GlobalOptions) {
		g.Workspace, g.Model, g.BaseURL = "/from/env", "env-model", "http://env.example/v1"
	})
	allGlobals := []string{"--workspace", "/ws", "--model", "m1", "--base-url", "http://flag.example/v1",
		"--max-workers", "2", "--max-queue", "0", "--demo", "--json", "--quiet"}
	everyGlobal := &launch.GlobalOptions{Workspace: "/ws", Model: "m1", BaseURL: "http://flag.example/v1",
		MaxWorkers: 2, MaxQueue: 0, Demo: true, JSON: true, Quiet: true}

	cases := []struct {
		name  string
		env   map[string]string
		stdin string
		args  []string
		want  any
	}{
		{name: "run joins its arguments into the prompt",
			args: []string{"run", "build", "a parser"},
			want: RunOptions{GlobalOptions: defaults(), TeamFlags: teamDefaults, Prompt: "build a parser", Placement: hosts.DefaultPlacement}},
		{name: "run - reads the prompt from stdin",
			stdin: "a prompt\nover two lines\n",
			args:  []string{"run", "-"},
			want:  RunOptions{GlobalOptions: defaults(), TeamFlags: teamDefaults, Prompt: "a prompt\nover two lines\n", Placement: hosts.DefaultPlacement}},
		{name: "run takes the environment's workspace, model and base URL",
			env:  env,
			args: []string{"run", "go"},
			want: RunOptions{GlobalOptions: fromEnv, TeamFlags: teamDefaults, Prompt: "go", Placement: hosts.DefaultPlacement}},
		{name: "run: flags win over the environment",
			env:  env,
			args: append(append([]string{}, allGlobals...), "run", "go"),
			want: RunOptions{GlobalOptions: everyGlobal, TeamFlags: teamDefaults, Prompt: "go", Placement: hosts.DefaultPlacement}},
		{name: "run: every run flag",
			args: []string{"run", "--timeout", "10m", "--max-turns", "7", "--resume", "--shutdown-timeout", "3s",
				"--plan-timeout", "4s", "--handoff-timeout", "5s", "--auto-claim", "--isolation", "worktree", "--sandbox", "required", "--sandbox-network", "off",
				"--placement-timeout", "20s", "--git-remote", "team", "go"},
			want: RunOptions{GlobalOptions: defaults(), Prompt: "go", Timeout: 10 * time.Minute, AutoClaim: true, Placement: 20 * time.Second,
				TeamFlags: launch.TeamFlags{MaxTurns: 7, Resume: true, ShutdownTimeout: 3 * time.Second, PlanTimeout: 4 * time.Second, HandoffTimeout: 5 * time.Second, Isolation: worktree.IsolationWorktree,
					GitRemote: "team", Sandbox: "required", SandboxNetwork: "off"}}},
		{name: "run: global flags after the command",
			args: []string{"run", "go", "--workspace", "/w", "--demo"},
			want: RunOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { g.Workspace, g.Demo = "/w", true }), TeamFlags: teamDefaults, Prompt: "go", Placement: hosts.DefaultPlacement}},

		{name: "chat defaults",
			args: []string{"chat"},
			want: ChatOptions{GlobalOptions: defaults(), TeamFlags: teamDefaults}},
		{name: "chat: every chat flag",
			env: env,
			args: []string{"chat", "--no-auto", "--plain", "--resume", "--max-turns", "3", "--shutdown-timeout", "1s", "--plan-timeout", "2s", "--handoff-timeout", "3s",
				"--sandbox", "off", "--sandbox-network", "off"},
			want: ChatOptions{GlobalOptions: fromEnv, NoAuto: true, Plain: true,
				TeamFlags: launch.TeamFlags{MaxTurns: 3, Resume: true, ShutdownTimeout: time.Second, PlanTimeout: 2 * time.Second, HandoffTimeout: 3 * time.Second, Isolation: worktree.IsolationNone,
					GitRemote: "origin", Sandbox: "off", SandboxNetwork: "off"}}},

		{name: "team defaults",
			args: []string{"team"},
			want: TeamOptions{GlobalOptions: defaults()}},
		{name: "team with the environment and --json",
			env:  env,
			args: []string{"team", "--json"},
			want: TeamOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { *g = *fromEnv; g.JSON = true })}},

		{name: "tasks defaults",
			args: []string{"tasks"},
			want: TasksOptions{GlobalOptions: defaults()}},
		{name: "tasks with every global flag",
			args: append([]string{"tasks"}, allGlobals...),
			want: TasksOptions{GlobalOptions: everyGlobal}},

		{name: "inbox without a name lists the inboxes",
			args: []string{"inbox"},
			want: InboxOptions{GlobalOptions: defaults()}},
		{name: "inbox NAME",
			env:  env,
			args: []string{"inbox", "alice", "--json"},
			want: InboxOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { *g = *fromEnv; g.JSON = true }), Name: "alice"}},

		{name: "send: from user by default, arguments joined",
			args: []string{"send", "--to", "alice", "hello", "there"},
			want: SendOptions{GlobalOptions: defaults(), To: "alice", From: "user", Content: "hello there"}},
		{name: "send - reads the message from stdin",
			stdin: "line one\nline two\n",
			args:  []string{"send", "--to", "lead", "--from", "carol", "--each-line", "-"},
			want:  SendOptions{GlobalOptions: defaults(), To: "lead", From: "carol", EachLine: true, Content: "line one\nline two\n"}},
		{name: "send takes the environment's workspace",
			env:  env,
			args: []string{"send", "--quiet", "--to=bob", "hi"},
			want: SendOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { *g = *fromEnv; g.Quiet = true }), To: "bob", From: "user", Content: "hi"}},
		{name: "send passes --from as given (runSend decides who may be named)",
			args: []string{"send", "--from", "lead", "--to", "alice", "hi"},
			want: SendOptions{GlobalOptions: defaults(), To: "alice", From: "lead", Content: "hi"}},

		{name: "merge NAME",
			args: []string{"merge", "alice", "--json"},
			want: MergeOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { g.JSON = true }), Name: "alice"}},
		{name: "diff NAME --stat",
			args: []string{"diff", "--stat", "bob"},
			want: DiffOptions{GlobalOptions: defaults(), Name: "bob", Stat: true}},

		{name: "version",
			args: []string{"version", "--json"},
			want: VersionOptions{GlobalOptions: with(func(g *launch.GlobalOptions) { g.JSON = true })}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := executeHooked(t, tc.env, tc.stdin, tc.args...)
			if err != nil {
				t.Fatalf("agentteam %q: %v", tc.args, err)
			}
			if c.calls != 1 {
				t.Fatalf("agentteam %q: the run hook was called %d times, want once", tc.args, c.calls)
			}
			got := parsed(c.opts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("agentteam %q:\n got %+v\n     globals %+v\nwant %+v\n     globals %+v",
					tc.args, got, *globalsOf(got), tc.want, *globalsOf(tc.want))
			}
		})
	}
}

// TestTeamOptionsKeepAClock: team's Options carry the clock its "ago" column reads.
func TestTeamOptionsKeepAClock(t *testing.T) {
	c, err := executeHooked(t, nil, "", "team")
	if err != nil {
		t.Fatal(err)
	}
	if o := c.opts.(*TeamOptions); o.Now == nil {
		t.Fatal("team's Options have no clock")
	}
}

// TestCommandsWriteToTheInjectedStreams: every command's Options carry the
// root's streams, so tests capture what the run functions print.
func TestCommandsWriteToTheInjectedStreams(t *testing.T) {
	for _, args := range [][]string{{"run", "x"}, {"chat"}, {"team"}, {"tasks"}, {"inbox"}, {"send", "--to", "a", "x"}, {"version"}} {
		in, out, errb := strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}
		var got IOStreams
		keep := func(io IOStreams) error { got = io; return nil }
		root := newRootCmd(IOStreams{In: in, Out: out, Err: errb}, func(string) string { return "" }, rootOpts{
			run:     func(o *RunOptions) error { return keep(o.IO) },
			chat:    func(o *ChatOptions) error { return keep(o.IO) },
			team:    func(o *TeamOptions) error { return keep(o.IO) },
			tasks:   func(o *TasksOptions) error { return keep(o.IO) },
			inbox:   func(o *InboxOptions) error { return keep(o.IO) },
			send:    func(o *SendOptions) error { return keep(o.IO) },
			version: func(o *VersionOptions) error { return keep(o.IO) },
		})
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if got.In != in || got.Out != out || got.Err != errb {
			t.Errorf("%q: the Options' streams are not the root's", args)
		}
	}
}

func TestBadUsageExitsTwoWithoutRunning(t *testing.T) {
	cases := []struct {
		args  []string
		stdin string
		says  string
	}{
		{args: []string{"run"}, says: "run needs a prompt"},
		{args: []string{"run", "  "}, says: "the prompt is empty"},
		{args: []string{"run", "-"}, stdin: " \n", says: "the prompt is empty"},
		{args: []string{"run", "--timeout", "soon", "go"}, says: "invalid argument"},
		{args: []string{"run", "--max-turns"}, says: "flag needs an argument"},
		{args: []string{"chat", "now"}, says: "takes no arguments"},
		{args: []string{"chat", "--no-such-flag"}, says: "unknown flag"},
		{args: []string{"team", "extra"}, says: "takes no arguments"},
		{args: []string{"team", "--no-such-flag"}, says: "unknown flag"},
		{args: []string{"tasks", "extra"}, says: "takes no arguments"},
		{args: []string{"inbox", "a", "b"}, says: "at most 1 argument"},
		{args: []string{"send", "hello"}, says: `"to"`},
		{args: []string{"send", "--to", "alice"}, says: "send needs the message"},
		{args: []string{"send", "--to"}, says: "flag needs an argument"},
		{args: []string{"send", "--to", "alice", "--each-line=maybe", "x"}, says: "invalid argument"},
		{args: []string{"version", "now"}, says: "takes no arguments"},
		{args: []string{"merge"}, says: "merge needs one teammate's name"},
		{args: []string{"merge", "../x"}, says: "may only contain"},
		{args: []string{"diff", "a", "b"}, says: "diff needs one teammate's name"},
		{args: []string{"diff", "lead"}, says: "reserved"},
		{args: []string{"frobnicate"}, says: `unknown command "frobnicate"`},
		{args: []string{"tema"}, says: `did you mean "team"`},
		{args: []string{"--max-workers", "many", "team"}, says: "invalid argument"},
		{args: []string{"--no-such-flag"}, says: "unknown flag"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := executeHooked(t, nil, tc.stdin, tc.args...)
			if code := exit.Code(err); code != exit.Usage {
				t.Fatalf("agentteam %q: exit code %d (%v), want %d", tc.args, code, err, exit.Usage)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("agentteam %q: %q does not say %q", tc.args, err, tc.says)
			}
			if c.calls != 0 {
				t.Errorf("agentteam %q: bad usage reached the run function", tc.args)
			}
		})
	}
}
