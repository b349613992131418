// Package team runs a team of agents: the registry, the worker pool, and the
// lifecycle of the lead and its teammates. It owns the running agents.
package team

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/plug/agentsmd"
	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/internal/plug/mcp"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/plugs"
	"github.com/agentteam/agentteam/team/pool"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/team/tasks"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Defaults of a team's bounds.
const (
	DefaultMaxWorkers = 5
	DefaultMaxQueue   = 50
	DefaultMaxTurns   = loop.DefaultMaxTurns // one bound, defined where cycles run
)

// Options configure a team.
type Options struct {
	Workspace *workspace.Workspace
	// Models gives each agent its model (the lead the default one); nil
	// means Model for every agent.
	Models      models.Models
	Model       llm.Model
	TeamName    string
	MaxWorkers  int
	MaxQueue    int
	MaxTurns    int
	BashTimeout time.Duration
	// Sandbox confines every agent's commands; it is recorded in the
	// registry at start for `team` to show. The zero value runs them plainly.
	Sandbox tools.Sandbox
	// AutoClaim gives an idle teammate the next claimable task that fits its role.
	AutoClaim bool
	// OnEvent sees every event after it is written to events.jsonl. It is
	// called from agent goroutines and must not block.
	OnEvent func(event.Event)
	// OnDelta sees streamed model text of every agent; may be nil.
	OnDelta func(llm.Delta)
	// PollInterval is the backstop for waking on inbox changes; default 1s.
	PollInterval time.Duration
	// ShutdownTimeout bounds the wait for a teammate's answer to a shutdown
	// request (then it is forced); PlanTimeout the wait for a plan review.
	ShutdownTimeout time.Duration
	PlanTimeout     time.Duration
	HandoffTimeout  time.Duration // bounds each step of a handoff; default DefaultHandoffTimeout
	// Permissions decide each tool call of every agent (team/permgate);
	// nil lets every call run.
	Permissions *permgate.Options
	// Resume continues the lead's earlier conversation and brings the
	// teammates back idle with theirs; otherwise the lead's is archived
	// (sessions/lead.<time>.jsonl) and the lead starts fresh.
	Resume bool
	// MCP gives agents the tools of the person's MCP servers (nil: none);
	// the caller starts and closes it.
	MCP *mcp.Manager
	// Instructions reads each agent's AGENTS.md files before each of its
	// cycles (nil: none are read).
	Instructions *agentsmd.Loader
	// Hooks are the person's hook commands (nil: none), run for every
	// agent this process runs (team/plugs).
	Hooks *hooks.Runner
	// Budget bounds the model calls of this process's agents together;
	// once spent, the team stops with a *BudgetError as its Fault.
	Budget models.Budget
	// RestoreSession, with Resume, first makes that archived session
	// (an id from ListSessions) the lead's conversation, archiving the
	// current one; it happens once this process owns the workspace.
	RestoreSession string
	// Isolation is where a teammate works when its spawn does not say:
	// IsolationNone (the default) or IsolationWorktree.
	Isolation string
	// Mailbox is the agents' inboxes; nil means the workspace's files
	// (.agentteam/inbox). Another store (internal/store/natsstore) is the
	// caller's to open and close. Store still returns the file store, so
	// the views that read files do not see such a mailbox yet.
	Mailbox Mailbox
	// Registry, Board and EventLines keep the registry, the task board and
	// the event log's lines in another store than the workspace's files
	// (NewRegistryOn, board.NewOn, a stream); nil means the files.
	Registry   *registry.Registry
	Board      *board.Board
	EventLines event.EventLines
	// Sessions keeps the teammates' conversations in another store than
	// the workspace's sessions/NAME.jsonl (a stream, natsstore.Sessions),
	// so that a teammate can resume on another host; nil means the files.
	// The lead's conversation stays a file of the workspace it runs in.
	Sessions SessionStore
	// Owner is the team's owner lock; nil means the file in the workspace
	// (FileOwnerLock). A team whose state is on a NATS server takes its
	// lease there (natsstore.Owner). If it is lost while the team runs,
	// the team stops (Fault says why).
	Owner registry.OwnerLock
	// Queue, on a team across hosts, takes every spawn: the teammate is
	// registered queued and runs on whichever worker takes its request
	// (worker.go); this process is one of the workers, as Worker says.
	// Heartbeats (may be nil) keep each worker's liveness. RoleLabels are
	// the labels a role's teammates ask of their worker when the spawn
	// names none.
	Queue      hosts.SpawnQueue
	Heartbeats hosts.Heartbeats
	Worker     hosts.Options
	RoleLabels map[string][]string
}

// Team is a running team in one workspace, owned by this process.
type Team struct {
	opts   Options
	ws     *workspace.Workspace
	store  Mailbox
	reg    RegistryDoc
	pool   *pool.Pool
	events EventSink
	tasks  *tasks.Service
	files  files // the same stores as files, for the accessors
	pid    int
	// releaseOwner gives the owner lock back (Close).
	releaseOwner func()
	// leadSign signs the lead's spawn requests (nil: its store checks none).
	leadSign *hosts.Signer

	// root is the context every goroutine of the team works under (each
	// its own child, carrying no values: a goroutine outlives the call
	// that started it). stop ends it: Close, a full disk, or the end of
	// the context given to Open; stopRun unregisters the latter.
	root    context.Context
	stop    context.CancelFunc
	stopRun func() bool
	wg      sync.WaitGroup

	roster    *roster    // member.go: the teammates this process runs
	messenger *Messenger // messenger.go: every message of the team
	inboxes   *inboxes   // unread.go: the inboxes' health
	// requests are the open protocol requests, each with its deadline's
	// timer; the protocols run on them.
	requests *protocol.Requests
	// indexes are the inboxes read on, not again, by the protocols
	// across processes (inbox.Indexes).
	indexes *inbox.Indexes

	shutdowns *protocol.Shutdowns
	plans     *protocol.Plans
	handoffs  *handoff.Service
	protocols *Protocols
	worktrees *worktree.Worktrees // teammates' git worktrees
	placing   *placement          // where each teammate works, and its merge
	mates     mateSessions        // the teammates' conversations
	perms     *permgate.Service   // nil: every tool call runs
	plugs     *plugs.Plugs        // the person's hooks and AGENTS.md files
	hosting   *hosting            // worker.go: this process as a worker; nil without a queue
	lead      *loop.Agent         // nil in a worker's team (OpenWorker)
	turns     *leadTurns          // the person's prompts to the lead, and its waits
	meters    *Models             // the models, the lead's, every agent's meter and the budget
	changed   signal              // coalesced signal: some status changed
	faults    *fault.Latch        // what stopped the team: a full disk, the owner lock lost
}

// Open prepares the team in a workspace: creates .agentteam/, repairs
// members left working by a dead process, and builds the lead.
func Open(ctx context.Context, opts Options) (*Team, error) {
	return open(ctx, opts, false)
}

// OpenWorker prepares a worker's team (`agentteam worker`): the team's
// stores, no lead and no owner lock; it runs the teammates it takes from
// opts.Queue until Serve's context ends. The end of ctx stops them
// without a word: give Serve the context a signal ends.
func OpenWorker(ctx context.Context, opts Options) (*Team, error) {
	if opts.Queue == nil {
		return nil, fmt.Errorf("team: a worker needs a work queue")
	}
	return open(ctx, opts, true)
}

// withDefaults is o with each bound it leaves unset at its default.
func (o Options) withDefaults() Options {
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = DefaultMaxWorkers
	}
	if o.MaxQueue < 0 {
		o.MaxQueue = 0
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = protocol.DefaultShutdownTimeout
	}
	if o.PlanTimeout <= 0 {
		o.PlanTimeout = protocol.DefaultPlanTimeout
	}
	return o
}

func open(ctx context.Context, opts Options, worker bool) (*Team, error) {
	if opts.Workspace == nil {
		return nil, fmt.Errorf("team: no workspace")
	}
	if opts.Models == nil && opts.Model == nil {
		return nil, fmt.Errorf("team: no model")
	}
	if opts.Models == nil {
		opts.Models = models.OneModel(opts.Model, "")
	}
	if err := models.CheckPrices(opts.Budget, opts.Models.Catalog()); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	ws := opts.Workspace
	if err := worktree.CheckIsolation(opts.Isolation); err != nil {
		return nil, err
	}
	if opts.Isolation == worktree.IsolationWorktree {
		// Said once at start, not at every spawn.
		if err := worktree.New(ws, nil, nil).Check(ctx); err != nil {
			return nil, fmt.Errorf("--isolation worktree: %w", err)
		}
	}
	if err := ws.Init(); err != nil {
		return nil, err
	}
	// A worker runs no lead: it takes no owner lock.
	releaseOwner, ownerLost, leadClaim := func() {}, (<-chan struct{})(nil), uint64(0)
	var leadSign *hosts.Signer
	if !worker {
		lock := opts.Owner
		if lock == nil {
			lock = registry.FileOwnerLock(ws.TeamDir())
		}
		var err error
		if releaseOwner, ownerLost, leadClaim, leadSign, err = acquireLead(ctx, lock, opts.Mailbox); err != nil {
			return nil, err
		}
	}
	reg := opts.Registry
	if reg == nil {
		reg = registry.NewRegistry(ws.RegistryPath(), opts.TeamName)
	}
	events := event.NewEventLog(ws.EventsPath(), opts.OnEvent)
	if opts.EventLines != nil {
		events = event.NewEventLogTo(opts.EventLines, opts.OnEvent)
	}
	t := &Team{
		releaseOwner: releaseOwner,
		leadSign:     leadSign,
		opts:         opts,
		ws:           ws,
		reg:          reg,
		pool:         pool.New(opts.MaxWorkers, opts.MaxQueue),
		events:       events,
		pid:          os.Getpid(),
		changed:      make(signal, 1),
	}
	t.root, t.stop = context.WithCancel(context.Background())
	t.faults = fault.NewLatch(ownerLost, tellFault(events), t.stop)
	t.meters = &Models{models: opts.Models, events: events, spend: models.NewSpend(opts.Budget, t.faults.Halt, func(err error) {
		t.events.Notify(event.Event{Payload: event.Failure{Class: event.ClassBudgetAsk, Text: models.AskText(err)}})
	})}
	if !worker {
		// Once this process no longer runs the team, it changes neither
		// the registry nor the task board.
		reg = reg.FencedBy(t.faults.Fence)
		t.reg = reg
	}
	t.meters.reg = t.reg // fenced, as every write of the lead's process
	t.roster = &roster{t: t, members: map[string]*member{}}
	t.meters.teammates = mateUsage(t.roster)
	t.inboxes = &inboxes{events: events, errs: map[string]string{}}
	// The run's deadline (the ctx given to Open) stops the teammates too.
	t.stopRun = context.AfterFunc(ctx, t.stop)
	if ownerLost != nil {
		t.wg.Go(func() { t.faults.WatchOwner(t.root) })
	}
	store := inbox.NewStoreWithOptions(ws.InboxDir(), inbox.StoreOptions{PollInterval: opts.PollInterval, OnRepair: t.inboxes.repaired})
	t.files = files{inbox: store, reg: reg}
	t.store = store
	if opts.Mailbox != nil {
		t.store = opts.Mailbox
	}
	if opts.Queue != nil || leadClaim != 0 {
		// Teammates run by workers, and the lead: what each says carries its claim.
		t.store = withSenderClaims(t.store, t.roster, leadClaim)
	}
	t.inboxes.store = t.store
	t.messenger = &Messenger{roster: t.roster, reg: t.reg, store: t.store, faults: t.faults, events: t.events, changed: t.changed}
	t.requests = protocol.New(t.events, t.store, t.changed.notify)
	t.indexes = inbox.NewIndexes(t.store)
	t.protocols = newProtocols(t)
	t.placing = newPlacement(t)
	t.worktrees = t.placing.worktrees
	t.mates = mateSessions{ws: ws, store: opts.Sessions}
	if opts.Queue != nil {
		t.hosting = newHosting(t, opts.Worker, opts.Queue, opts.Heartbeats, !worker)
	}
	t.perms = newGate(t, opts)
	t.plugs = newPlugs(t)
	events.OnWriteError(t.faults.CheckStorage)
	reg.OnWriteError(t.faults.CheckStorage)
	fail := func(err error) (*Team, error) {
		t.stopRun()
		t.stop()
		releaseOwner()
		return nil, fault.AsStorageError(err)
	}
	if worker {
		t.tasks = newTasks(t, false)
		t.hosting.start()
		return t, nil
	}
	// This process holds the owner lock, so whatever the registry shows
	// queued or working was left by a process that is gone, whatever its
	// PID — unless a live worker of a team across hosts runs it.
	repaired, err := reg.RepairRunning(ctx, t.hosting.runsElsewhere())
	if err != nil {
		return fail(err)
	}
	emitRepairs(t.events, repaired)
	if err := recordSandbox(ctx, reg, opts.Sandbox); err != nil {
		return fail(err)
	}
	if !opts.Resume {
		if fi, err := os.Stat(ws.SessionPath(inbox.LeadName)); err == nil && fi.Size() > 0 {
			_ = sessions.ArchiveLead(ws, time.Now().UTC()) // as before: a start is not refused for it
		}
	} else if opts.RestoreSession != "" {
		if err := sessions.Restore(ws, opts.RestoreSession, time.Now().UTC()); err != nil {
			return fail(err)
		}
	}
	t.tasks = newTasks(t, true)
	lead, err := t.newLead(ctx)
	if err != nil {
		return fail(err)
	}
	t.lead = lead
	t.turns = &leadTurns{agent: lead, hooks: t.plugs.For(inbox.LeadName, "lead", ""), events: t.events,
		inboxes: t.inboxes, settled: t.roster.settled, changed: t.changed, poll: opts.PollInterval}
	if opts.Resume {
		if err := t.roster.resumeTeammates(ctx); err != nil {
			closing, cancel := context.WithTimeout(context.Background(), CloseTimeout)
			defer cancel()
			_ = t.Close(closing)
			return nil, fault.AsStorageError(err)
		}
	}
	if t.hosting != nil {
		t.hosting.start()
	}
	return t, nil
}

// Workspace is the team's directory.
func (t *Team) Workspace() *workspace.Workspace { return t.ws }

// Mailbox is the inboxes the team uses: the files unless Options.Mailbox
// gave another store.
func (t *Team) Mailbox() Mailbox {
	if cm, ok := t.store.(*claimedMailbox); ok {
		return cm.Mailbox // the store itself, with whatever more it offers (Mark)
	}
	return t.store
}

// Registry is the team's registry (a file unless Options.Registry said).
func (t *Team) Registry() *registry.Registry { return t.files.reg }

// Lead is the lead agent.
func (t *Team) Lead() *loop.Agent { return t.lead }

// Emit records an event in events.jsonl (and hands it to the subscriber).
func (t *Team) Emit(e event.Event) { t.events.Emit(e) }

// CloseTimeout is how long the commands let a team take to stop (Close):
// a teammate's model call and command end with its context, so a team
// that takes longer is stuck.
const CloseTimeout = time.Minute

// Close stops every teammate goroutine of this process and every request's
// timer, and waits for them, as long as ctx lets it: nothing of the team
// writes once it returns nil. At ctx's end it returns an error saying so
// and keeps the owner lock, which the kernel gives back when the process
// ends: no other process takes the team while one of these may still write.
func (t *Team) Close(ctx context.Context) error {
	t.stopRun()
	t.stop()
	stopped := make(chan struct{})
	go func() {
		t.requests.Close() // waits for expiry callbacks already running
		t.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		return fmt.Errorf("the team did not stop in time (%w): a teammate's goroutine still runs; the team stays this process's until it ends", context.Cause(ctx))
	}
	// Merged worktrees go; unmerged branches stay, listed as events.
	t.worktrees.Cleanup(ctx)
	if t.lead != nil {
		_ = t.lead.Close()
	}
	t.reg.Flush()
	t.releaseOwner()
	return t.files.inbox.Close()
}

// signal is a coalesced wake-up: a send never blocks, and sends made
// before the receiver looks are one.
type signal chan struct{}

func (s signal) notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// recordSandbox writes in the registry how this team confines commands, so
// `team` can show it; a team given no sandbox setting writes nothing.
func recordSandbox(ctx context.Context, reg *registry.Registry, s tools.Sandbox) error {
	if !s.On && s.Reason == "" {
		return nil
	}
	state := &registry.SandboxState{On: s.On, Network: s.Network, Reason: s.Reason, State: s.State()}
	return reg.Change(ctx, func(c *registry.Config) error {
		c.Sandbox = state
		return nil
	})
}
