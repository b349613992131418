package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/ui/progress"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
)

// MCPServeOptions are the inputs of `agentteam mcp serve`.
type MCPServeOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	launch.TeamFlags
	// HTTP is the address for streamable HTTP; "" serves on stdin and stdout.
	HTTP string
	// AnyHost lets HTTP listen on an address beyond loopback.
	AnyHost bool
	// RunTimeout bounds one team_run, and is its default.
	RunTimeout time.Duration
}

// newMCPServeCmd builds `agentteam mcp serve`; runF, when not nil, replaces runMCPServe.
func newMCPServeCmd(g *launch.GlobalOptions, io IOStreams, runF func(*MCPServeOptions) error) *cobra.Command {
	opts := &MCPServeOptions{GlobalOptions: g, IO: io}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve this workspace's team to an MCP client (Claude Code, Codex, Cursor, the MCP Inspector)",
		Long: `Serve the team as an MCP server, on stdin and stdout (or streamable HTTP with --http ADDR): tools to
run the lead on a task and wait for its answer (team_run, with progress notifications as the team works),
send a message (team_send), read the registry, an inbox, the task board and the waiting asks (team_status,
team_inbox, team_tasks, team_requests) and answer an ask (team_answer); the registry, the board and the
inboxes as resources. The client is the person: asks wait for its team_answer, as chat's wait for you.
agentteam chat, team, inbox and requests read the same workspace meanwhile.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runMCPServe(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.HTTP, "http", "", "serve streamable HTTP at ADDR (e.g. 127.0.0.1:7300) instead of stdin and stdout; the endpoint is /mcp")
	c.Flags().BoolVar(&opts.AnyHost, "allow-any-host", false, "let --http listen beyond loopback: whoever reaches the port can run the team and answer its asks")
	c.Flags().DurationVar(&opts.RunTimeout, "run-timeout", 30*time.Minute, "the longest one team_run may take (its timeout_seconds default)")
	launch.AddTeamFlags(c.Flags(), &opts.TeamFlags)
	launch.WithConfig(g, c)
	return c
}

func runMCPServe(ctx context.Context, opts *MCPServeOptions) error {
	if opts.RunTimeout <= 0 {
		return exit.Usagef("--run-timeout must be positive")
	}
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	if opts.HTTP != "" {
		if err := checkLoopback(opts.HTTP, opts.AnyHost); err != nil {
			return err
		}
	}
	ctx, stop := context.WithCancel(ctx)
	s := &teamServer{opts: opts, root: ws.Root, ctx: ctx, stop: stop}
	srv := s.server()
	// A team_run still running when the server stops (SIGTERM, the client
	// gone) is interrupted, and the server ends once its team has closed.
	defer func() { stop(); s.waitRun() }()
	if opts.HTTP == "" {
		err := srv.Run(ctx, &sdkmcp.StdioTransport{})
		s.stop()
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("serve MCP on stdin and stdout: %w", err)
		}
		return nil
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("listen on %s: %w", opts.HTTP, err)}
	}
	mux := http.NewServeMux()
	// A web page the person visits must not reach the team: the SDK refuses
	// a loopback request naming another Host (DNS rebinding), and a
	// browser's cross-origin request is refused here.
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(
		sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, nil)))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(opts.IO.Err, "agentteam: serving the team in %s at http://%s/mcp\n", ws.Root, ln.Addr())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve MCP at %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// The interrupted team_run answers first; then the clients' sessions,
	// whose open streams would hold Shutdown, end.
	s.waitRun()
	for ss := range srv.Sessions() {
		_ = ss.Close()
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	return nil
}

// checkLoopback refuses an address beyond this machine unless anyHost: the
// client of this server is the person, who may run the team and answer asks.
func checkLoopback(addr string, anyHost bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return exit.Usagef("--http %s: want HOST:PORT, e.g. 127.0.0.1:7300 (%v)", addr, err)
	}
	if anyHost {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return exit.Usagef("--http %s would listen beyond this machine, where whoever reaches the port runs the team and answers its asks: use 127.0.0.1:PORT, or add --allow-any-host behind your own authentication", addr)
}

// teamServer is the team as MCP tools and resources. Each tool is the CLI
// command of the same job run in this process, so it holds the locks the
// command holds and another terminal sees what it did.
type teamServer struct {
	opts *MCPServeOptions
	root string // the workspace
	// ctx ends with the server: a team_run is interrupted then, whatever
	// its request's own context does.
	ctx  context.Context
	stop context.CancelFunc
	// running is held while a team_run runs: one team at a time owns the workspace.
	running sync.Mutex
	mu      sync.Mutex
	team    *team.Team // team_run's, while it runs: plans are answered there
}

// waitRun returns once no team_run runs (one that runs was told to stop).
func (s *teamServer) waitRun() {
	s.running.Lock()
	defer s.running.Unlock() // the lock is what is waited for
}

func (s *teamServer) server() *sdkmcp.Server {
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "agentteam", Version: Version}, &sdkmcp.ServerOptions{
		Instructions: "A team of agents in " + s.root + ": team_run gives the lead a task and waits for its answer; " +
			"while it runs, team_requests lists the permission asks that wait for you and team_answer answers them.",
	})
	readOnly := &sdkmcp.ToolAnnotations{ReadOnlyHint: true}
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_run", Description: "Run the lead on a task in this workspace until the team settles (teammates spawned, messages answered) and return the lead's final answer. Progress notifications say what the team does meanwhile."}, s.teamRun)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_send", Description: "Send a message to the lead's or a teammate's inbox (it wakes them if idle)."}, s.teamSend)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_status", Description: "The registry as JSON: each teammate's role, status, turns, tokens, unread messages and last activity.", Annotations: readOnly}, s.teamStatus)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_inbox", Description: "Without a name, every inbox with its unread and total counts; with one, that inbox's messages as JSON (never marks them read).", Annotations: readOnly}, s.teamInbox)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_tasks", Description: "The task board as JSON: each task's id, status, owner, blockers and subject.", Annotations: readOnly}, s.teamTasks)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_requests", Description: "The permission asks that wait for an answer: who asks, which tool, the command or the diff, the request id.", Annotations: readOnly}, s.teamRequests)
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "team_answer", Description: "Approve or deny a permission ask by its request id (see team_requests), or approve or reject the plan a teammate waits with while team_run runs; a denial's reason is what the agent reads."}, s.teamAnswer)

	for _, r := range []struct{ uri, name, desc string }{
		{registryURI, "registry", "the team's registry: teammates, statuses, usage"},
		{boardURI, "board", "the task board"},
		{inboxesURI, "inboxes", "every inbox with its unread and total counts"},
	} {
		srv.AddResource(&sdkmcp.Resource{URI: r.uri, Name: r.name, Description: r.desc, MIMEType: "application/json"}, s.readResource)
	}
	srv.AddResourceTemplate(&sdkmcp.ResourceTemplate{URITemplate: inboxURIPrefix + "{name}", Name: "inbox",
		Description: "one agent's inbox: its messages", MIMEType: "application/json"}, s.readResource)
	return srv
}

// The team's files as resources.
const (
	registryURI    = "agentteam://team/registry"
	boardURI       = "agentteam://team/board"
	inboxesURI     = "agentteam://team/inboxes"
	inboxURIPrefix = "agentteam://team/inbox/"
)

func (s *teamServer) readResource(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
	uri := req.Params.URI
	var out string
	var err error
	switch {
	case uri == registryURI:
		out, err = s.command(func(g *launch.GlobalOptions, io IOStreams) error {
			return runTeam(ctx, &TeamOptions{GlobalOptions: g, IO: io, Now: time.Now})
		})
	case uri == boardURI:
		out, err = s.command(func(g *launch.GlobalOptions, io IOStreams) error {
			return runTasks(ctx, &TasksOptions{GlobalOptions: g, IO: io})
		})
	case uri == inboxesURI:
		out, err = s.command(func(g *launch.GlobalOptions, io IOStreams) error {
			return runInbox(ctx, &InboxOptions{GlobalOptions: g, IO: io})
		})
	case strings.HasPrefix(uri, inboxURIPrefix):
		name := strings.TrimPrefix(uri, inboxURIPrefix)
		if inbox.ValidateName(name) != nil {
			return nil, sdkmcp.ResourceNotFoundError(uri)
		}
		out, err = s.command(func(g *launch.GlobalOptions, io IOStreams) error {
			return runInbox(ctx, &InboxOptions{GlobalOptions: g, IO: io, Name: name})
		})
	default:
		return nil, sdkmcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &sdkmcp.ReadResourceResult{Contents: []*sdkmcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: out}}}, nil
}

// command runs one of the CLI's commands with --json and --quiet, its
// stdout and stderr captured; an error carries what it said on stderr.
func (s *teamServer) command(run func(*launch.GlobalOptions, IOStreams) error) (string, error) {
	g := *s.opts.GlobalOptions
	g.JSON, g.Quiet = true, true
	var out, errOut bytes.Buffer
	err := run(&g, IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	said := strings.TrimSpace(errOut.String())
	if err != nil {
		if said != "" {
			return "", fmt.Errorf("%s\n%w", said, err)
		}
		return "", err
	}
	if said != "" {
		return out.String() + said + "\n", nil
	}
	return out.String(), nil
}

// toolResult is a command's output as a tool's result, or its error as one.
func toolResult(out string, err error) (*sdkmcp.CallToolResult, any, error) {
	if err != nil {
		return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: err.Error()}}}, nil, nil
	}
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: out}}}, nil, nil
}

type noInput struct{}

func (s *teamServer) teamStatus(ctx context.Context, _ *sdkmcp.CallToolRequest, _ noInput) (*sdkmcp.CallToolResult, any, error) {
	return toolResult(s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		return runTeam(ctx, &TeamOptions{GlobalOptions: g, IO: io, Now: time.Now})
	}))
}

func (s *teamServer) teamTasks(ctx context.Context, _ *sdkmcp.CallToolRequest, _ noInput) (*sdkmcp.CallToolResult, any, error) {
	return toolResult(s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		return runTasks(ctx, &TasksOptions{GlobalOptions: g, IO: io})
	}))
}

type inboxInput struct {
	Name string `json:"name,omitempty" jsonschema:"the agent whose messages to show: lead, a teammate, or user (asks and answers for you); omit it for every inbox's counts"`
}

func (s *teamServer) teamInbox(ctx context.Context, _ *sdkmcp.CallToolRequest, in inboxInput) (*sdkmcp.CallToolResult, any, error) {
	return toolResult(s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		return runInbox(ctx, &InboxOptions{GlobalOptions: g, IO: io, Name: in.Name})
	}))
}

type requestsInput struct {
	All bool `json:"all,omitempty" jsonschema:"also list abandoned asks, whose asking process is gone"`
}

func (s *teamServer) teamRequests(ctx context.Context, _ *sdkmcp.CallToolRequest, in requestsInput) (*sdkmcp.CallToolResult, any, error) {
	return toolResult(s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		return runRequests(ctx, &RequestsOptions{GlobalOptions: g, IO: io, Now: time.Now, All: in.All})
	}))
}

type sendInput struct {
	To      string `json:"to" jsonschema:"the agent to send to: lead or a teammate's name"`
	Content string `json:"content" jsonschema:"the message"`
	From    string `json:"from,omitempty" jsonschema:"the sender: user (the default) or your own name, never an agent's"`
}

func (s *teamServer) teamSend(ctx context.Context, _ *sdkmcp.CallToolRequest, in sendInput) (*sdkmcp.CallToolResult, any, error) {
	if in.From == "" {
		in.From = inbox.UserName
	}
	return toolResult(s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		return runSend(ctx, &SendOptions{GlobalOptions: g, IO: io, To: in.To, From: in.From, Content: in.Content})
	}))
}

type answerInput struct {
	ID      string `json:"id,omitempty" jsonschema:"the ask's request id, from team_requests or a progress notification"`
	Plan    string `json:"plan,omitempty" jsonschema:"instead of id: the teammate whose plan to approve or reject (team_status shows plan awaiting_approval)"`
	Approve bool   `json:"approve" jsonschema:"true allows the call or approves the plan, false denies or rejects it"`
	Reason  string `json:"reason,omitempty" jsonschema:"why not, or feedback on a plan: the agent reads it (needed to deny or reject)"`
	Always  bool   `json:"always,omitempty" jsonschema:"with approve and id: allow every identical call from now on (adds the rule to the project's .agentteam/config.toml)"`
}

func (s *teamServer) teamAnswer(ctx context.Context, _ *sdkmcp.CallToolRequest, in answerInput) (*sdkmcp.CallToolResult, any, error) {
	if !in.Approve && strings.TrimSpace(in.Reason) == "" {
		return toolResult("", errors.New("a denial needs a reason: the agent reads it to know what to do instead"))
	}
	if (in.ID == "") == (in.Plan == "") {
		return toolResult("", errors.New("give either id (a permission ask's request id) or plan (the teammate whose plan waits), not both"))
	}
	if in.Plan != "" {
		s.mu.Lock()
		tm := s.team
		s.mu.Unlock()
		if tm == nil {
			return toolResult("", errors.New("no team_run is running in this server: a plan is reviewed while its team runs"))
		}
		return toolResult(tm.Protocols().ReviewPlanOf(ctx, in.Plan, in.Approve, in.Reason))
	}
	var verb string
	out, err := s.command(func(g *launch.GlobalOptions, io IOStreams) error {
		if in.Approve {
			verb = "allowed"
			return runApprove(ctx, &ApproveOptions{GlobalOptions: g, IO: io, ID: in.ID, Always: in.Always, Now: time.Now})
		}
		verb = "denied"
		return runDeny(ctx, &DenyOptions{GlobalOptions: g, IO: io, ID: in.ID, Reason: in.Reason, Now: time.Now})
	})
	if err == nil && strings.TrimSpace(out) == "" {
		out = verb + " request " + in.ID
	}
	return toolResult(out, err)
}

type runInput struct {
	Prompt         string `json:"prompt" jsonschema:"the task for the lead, as you would give it to agentteam run"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"bound the run; the default and the most is the server's --run-timeout"`
}

func (s *teamServer) teamRun(ctx context.Context, req *sdkmcp.CallToolRequest, in runInput) (*sdkmcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return toolResult("", errors.New("the prompt is empty: say what the team should do"))
	}
	if in.TimeoutSeconds < 0 {
		return toolResult("", errors.New("timeout_seconds must not be negative"))
	}
	timeout := s.opts.RunTimeout
	if d := time.Duration(in.TimeoutSeconds) * time.Second; d > 0 && d < timeout {
		timeout = d
	}
	ctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	defer context.AfterFunc(s.ctx, interrupt)()
	if !s.running.TryLock() {
		return toolResult("", errors.New("a team_run is already running in this workspace: wait for its answer, or team_send the lead what to do next"))
	}
	defer s.running.Unlock()
	g := *s.opts.GlobalOptions
	opts := &RunOptions{GlobalOptions: &g, IO: IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: s.opts.IO.Err},
		TeamFlags: s.opts.TeamFlags, Prompt: in.Prompt, Timeout: timeout, Placement: hosts.DefaultPlacement}
	printed := progress.New(io.Discard, s.opts.IO.Err, false, s.opts.Quiet)
	n := &progressNotes{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken()}
	final, _, err := runLead(ctx, opts, leadRun{person: true, onEvent: func(e event.Event) {
		printed.Event(e)
		n.event(e)
	}, opened: func(tm *team.Team) {
		s.mu.Lock()
		s.team = tm
		s.mu.Unlock()
	}})
	return toolResult(strings.TrimRight(final, "\n"), err)
}

// progressNotes sends the client a progress notification for each event
// `run` would print a line for, when the client asked for progress.
type progressNotes struct {
	ctx     context.Context
	session *sdkmcp.ServerSession
	token   any
	mu      sync.Mutex // events come from many agents' goroutines; progress must rise
	n       float64
}

func (p *progressNotes) event(e event.Event) {
	if p.token == nil || p.session == nil {
		return
	}
	line := progress.Line(e)
	if a, ok := e.Payload.(event.Permission); ok && a.Decision == "asked" && a.By == inbox.UserName {
		line = e.Sentence() + ": answer with team_answer (id " + a.RequestID + ")"
	}
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	_ = p.session.NotifyProgress(p.ctx, &sdkmcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: line})
}
