package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/prompt"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// member is a teammate run by this process.
type member struct {
	name, role string
	agent      *loop.Agent
	model      *models.Agent // its model and the meter of its calls
	cancel     context.CancelFunc
	done       chan struct{}

	// root is where its tools work: its worktree, or "" for the workspace.
	root string
	// planMode teammates may write only once planApproved is set.
	planMode     bool
	planApproved atomic.Bool
	// planFromRegistry, for a teammate whose plan another process reviews
	// (a worker's), looks whether the registry says it was approved.
	planFromRegistry func() bool

	// Guarded by roster.mu: status mirrors the registry for this process's
	// own decisions (settling); cycleCancel ends the running cycle;
	// stopApproved is set when the teammate approved a shutdown.
	status       registry.Status
	cycleCancel  context.CancelFunc
	stopApproved bool

	// claim, for a teammate a worker took from the queue, is the spawn
	// request it took (the registry entry's SpawnID): each status write
	// checks, in the store's compare-and-set, that the entry is still this
	// worker's claim, and is refused once a respawn took it. fenced is set
	// once this process knows it lost the teammate (its heartbeat lost, or
	// a write refused): it then ends without writing or telling anyone.
	claim  string
	fenced atomic.Bool
	// request is the spawn request it was taken with, given back to the
	// queue if this worker stops it and nobody respawned it (giveBack).
	request hosts.Request
	// sendClaim, for such a teammate on a store that fences senders, is
	// its claim of what it sends (claimedMailbox); 0 for none.
	sendClaim uint64
}

// roster is the teammates this process runs: their spawn, their lives
// (queued → working → idle), and their statuses in memory, in the registry
// and in the event log.
type roster struct {
	t *Team // the stores, the pool, the protocols a teammate's life runs into

	// mu guards members and each member's status, cycleCancel and stopApproved.
	mu      sync.Mutex
	members map[string]*member
}

// Spawn registers and starts the teammate spec describes; from sends its
// first message (the prompt): the lead, or the person through a chat. It
// is the team's one way to spawn: the lead's spawn_teammate comes here
// too (messenger.SpawnTeammate).
func (t *Team) Spawn(ctx context.Context, from string, spec tools.SpawnSpec) error {
	return t.roster.spawn(ctx, from, spec)
}

// spawn registers and starts the teammate spec describes.
func (r *roster) spawn(ctx context.Context, from string, spec tools.SpawnSpec) error {
	t := r.t
	name, role, prompt := spec.Name, spec.Role, spec.Prompt
	if err := inbox.ValidateTeammateName(name); err != nil {
		return err
	}
	role = strings.TrimSpace(role)
	if role == "" {
		role = "teammate"
	}
	if strings.TrimSpace(prompt) == "" {
		return fmt.Errorf("the prompt for %s is empty: say what it should do", name)
	}
	if len(prompt) > inbox.MaxContentBytes {
		return fmt.Errorf("the prompt for %s is %d bytes, more than the %d allowed", name, len(prompt), inbox.MaxContentBytes)
	}
	if t.root.Err() != nil {
		return fmt.Errorf("the team is stopping")
	}
	if err := ctx.Err(); err != nil {
		return err // the call that asked is gone: spawn nobody
	}
	choice, err := t.meters.resolve(spec.Provider, spec.Model, role)
	if err != nil {
		return err
	}
	if t.hosting != nil {
		// A team across hosts: whichever worker takes the request runs it.
		return r.spawnQueued(ctx, from, spec, role, choice)
	}

	r.mu.Lock()
	if m, ok := r.members[name]; ok && m.status != registry.StatusShutdown && m.status != registry.StatusFailed {
		st := m.status
		r.mu.Unlock()
		return fmt.Errorf("a teammate named %s already exists (status %s): send it a message instead", name, st)
	}
	r.mu.Unlock()

	ticket, err := t.pool.Enqueue()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	entry := registry.Member{Name: name, Role: role, Status: registry.StatusQueued, CreatedAt: now, UpdatedAt: now, PID: t.pid, PlanMode: spec.PlanMode,
		ModelRef: modelRefOf(choice)}
	where, err := t.placing.place(ctx, name, t.placing.isolationOf(spec.Isolation), &entry)
	if err != nil {
		ticket.Cancel()
		return err
	}
	// The change fails, if at all, before it changes anything.
	err = t.reg.Change(ctx, func(c *registry.Config) error {
		i := c.Find(name)
		if spec.PlanMode {
			entry.PlanState = registry.PlanDrafting
		}
		if i < 0 {
			c.Teammates = append(c.Teammates, entry)
			return nil
		}
		// Only this process (the owner) runs teammates: an entry of another
		// PID is left from an earlier run and may be spawned anew.
		old := c.Teammates[i]
		if old.Status.Live() && old.PID == t.pid {
			return fmt.Errorf("a teammate named %s already exists (status %s): send it a message instead", name, old.Status)
		}
		c.Teammates[i] = entry
		return nil
	})
	if err != nil {
		ticket.Cancel()
		return err
	}
	if err := t.mates.archive(ctx, name, now); err != nil {
		ticket.Cancel()
		r.markFailed(name, err)
		return err
	}

	mctx, cancel := context.WithCancel(t.root)
	m := &member{name: name, role: role, cancel: cancel, done: make(chan struct{}), status: registry.StatusQueued, planMode: spec.PlanMode, root: where.Root,
		model: r.t.meters.forAgent(choice, registry.Usage{})}
	agent, err := r.newTeammateAgent(ctx, m, "startup")
	if err != nil {
		cancel()
		ticket.Cancel()
		r.markFailed(name, err)
		return err
	}
	m.agent = agent
	r.mu.Lock()
	r.members[name] = m
	r.mu.Unlock()

	t.events.Emit(event.Event{Agent: name, Payload: event.Spawn{Role: role, Status: registry.StatusQueued, From: from, PID: t.pid, Model: choice.Label()}})
	if _, err := t.messenger.deliver(ctx, from, name, inbox.TypeMessage, prompt); err != nil {
		cancel()
		close(m.done)
		ticket.Cancel()
		r.markFailed(name, err)
		return err
	}
	t.wg.Add(1)
	go r.runTeammate(mctx, m, ticket.Acquire)
	return nil
}

func (r *roster) newTeammateAgent(ctx context.Context, m *member, source string) (*loop.Agent, error) {
	t := r.t
	name := m.name
	hk := t.plugs.For(name, m.role, m.root)
	ws, system := t.ws, prompt.Teammate(t.opts.teamName(), t.ws.Root, name, m.role, m.planMode)
	if m.root != "" {
		// Its file tools and bash are confined to its worktree.
		wt, err := workspace.Open(m.root)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		ws, system = wt, prompt.Teammate(t.opts.teamName(), wt.Root, name, m.role, m.planMode)+prompt.Worktree(worktree.BranchPrefix+name)
	}
	session := t.mates.log(name)
	if m.claim != "" {
		// A worker's teammate is the one sender of its messages and the one
		// writer of its conversation from now on: an earlier run of it (on a
		// worker cut off) may no longer send or write. Its sending is
		// claimed first, so a conversation claimed has its sending claimed.
		if err := r.claimSending(ctx, m); err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		if c, ok := session.(interface{ Claim(context.Context) error }); ok {
			if err := c.Claim(ctx); err != nil {
				return nil, fmt.Errorf("start %s: %w", name, err)
			}
		}
	}
	agent, err := loop.NewAgent(ctx, loop.AgentConfig{
		Name:   name,
		System: system + hk.SessionStart(t.root, source),
		// Its AGENTS.md files, from where it works: its worktree's own.
		Instructions: hk.Instructions(),
		Model:        m.model,
		Inbox:        agentInbox{Inbox: t.store},
		SessionPath:  t.mates.path(name),
		Session:      session,
		MaxTurns:     t.opts.MaxTurns,
		OnEvent:      agentEvents(t.events),
		OnDelta:      t.opts.OnDelta,
		Recover:      t.messenger.recoverCall(name),
		// The model at the teammate's start; a later /model of the lead's
		// does not concern it.
		ContextWindow: m.model.Choice().ContextWindow,
		ReplyReserve:  m.model.Choice().ReplyReserve,
		OnStop:        hk.OnStop(true),
	})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	agent.SetTools(tools.ForTeammate(tools.Env{
		Agent:       name,
		Workspace:   ws,
		Messenger:   t.messenger,
		Inbox:       agent,
		Tasks:       t.tasks,
		Protocols:   t.protocols,
		Gate:        m,
		PlanMode:    m.planMode,
		BashTimeout: t.opts.BashTimeout,
		Permission:  t.perms.Gate(name, ws),
		Hooks:       hk.ToolHooks(),
		Sandbox:     t.opts.Sandbox,
		Extra:       t.opts.MCP.Tools(name, m.role, tools.DefaultOutputCap),
	}))
	return agent, nil
}

// runTeammate is the life of one teammate: wait for messages, take a worker,
// run a cycle, report to the lead, give the worker back, become idle. A
// spawned teammate's first cycle takes its worker with first (its queue
// ticket, or the place a worker took its request with); a resumed one has none.
func (r *roster) runTeammate(ctx context.Context, m *member, first func(context.Context) (func(), error)) {
	t := r.t
	defer t.wg.Done()
	defer close(m.done)
	defer m.agent.Close()
	defer func() {
		// A bug must cost one teammate, not the process and its team.
		if p := recover(); p != nil {
			r.fail(m, event.ClassInternal, fmt.Errorf("internal error: %v (please report this)", p))
		}
	}()
	wake := t.store.Watch(ctx, m.name)
	for start := true; ; start = false {
		var release func()
		var err error
		switch {
		case start && first != nil:
			release, err = first(ctx)
		case start && m.agent.HasNews():
			// Resumed mid-cycle: finish answering what it had taken in.
			release, err = t.pool.Acquire(ctx)
		default:
			if !r.waitForWork(ctx, m.name, wake) {
				return
			}
			if t.shutdowns.AnswerIfAsked(ctx, mate{r, m}) {
				return
			}
			// Only a teammate that must wait for a worker is shown queued.
			var ok bool
			if release, ok = t.pool.TryAcquire(); !ok {
				r.setStatus(m, registry.StatusQueued, "", nil)
				release, err = t.pool.Acquire(ctx)
			}
		}
		if err != nil {
			return
		}
		// Nobody waits for this write: the event follows once the
		// registry shows it, and the next change of this teammate is written after.
		r.setStatusLater(m, registry.StatusWorking, "", func(mb *registry.Member) { mb.Activity = event.Activity{}.Words() })
		cctx, stop := context.WithCancel(ctx)
		r.mu.Lock()
		m.cycleCancel = stop
		r.mu.Unlock()
		cycle, err := m.agent.RunCycle(cctx)
		r.mu.Lock()
		m.cycleCancel = nil
		approved := m.stopApproved
		r.mu.Unlock()
		stop()
		release()
		switch {
		case approved:
			r.setStatus(m, registry.StatusShutdown, "approved a shutdown request", func(mb *registry.Member) { mb.Activity, mb.Ended = "", true })
			return
		case ctx.Err() != nil || m.fenced.Load():
			return
		case errors.Is(err, loop.ErrNothingToDo):
			if t.shutdowns.AnswerIfAsked(ctx, mate{r, m}) {
				return
			}
			r.setIdle(ctx, m, cycle)
			continue
		case errors.Is(err, loop.ErrTurnLimit):
			cycle.Final = fmt.Sprintf("(stopped after %d turns without finishing) %s", cycle.Turns, cycle.Final)
		case err != nil:
			r.fail(m, cycleErrorClass(err), err)
			return
		}
		final := cycle.Final
		if strings.TrimSpace(final) == "" {
			final = "(finished without a reply)"
		}
		if m.root != "" {
			// Its work, committed on its branch, and what merging it brings.
			final += "\n\n" + t.worktrees.Report(ctx, m.name)
		}
		if _, err := t.messenger.deliver(ctx, m.name, inbox.LeadName, inbox.TypeResult, fitMessage(final, t.ws.SessionPath(m.name))); err != nil {
			r.fail(m, event.ClassInbox, fmt.Errorf("report to the lead: %w", err))
			return
		}
		if t.shutdowns.AnswerIfAsked(ctx, mate{r, m}) {
			return
		}
		r.setIdle(ctx, m, cycle)
	}
}

// inCycle reports whether the named teammate, run by this process, is in a
// work cycle or waiting for a worker to start one; known is false for a
// name this process does not run.
func (r *roster) inCycle(name string) (busy, known bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.members[name]
	if m == nil {
		return false, false
	}
	return m.cycleCancel != nil || m.status == registry.StatusQueued, true
}

// moving reports whether a teammate of this process will run a cycle
// without anyone's word: it is in one, queued for one, or alive with
// unread messages it is about to take.
func (r *roster) moving(ctx context.Context) bool {
	var alive []string
	r.mu.Lock()
	for name, m := range r.members {
		if m.cycleCancel != nil || m.status == registry.StatusQueued {
			r.mu.Unlock()
			return true
		}
		select {
		case <-m.done:
		default:
			alive = append(alive, name)
		}
	}
	r.mu.Unlock()
	for _, name := range alive {
		if r.t.inboxes.hasUnread(ctx, name) {
			return true
		}
	}
	return false
}

// waitForWork blocks until the teammate's inbox has unread lines.
func (r *roster) waitForWork(ctx context.Context, name string, wake <-chan struct{}) bool {
	t := r.t
	for {
		if t.inboxes.hasUnread(ctx, name) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case _, ok := <-wake:
			if !ok {
				return false
			}
		}
	}
}

func (r *roster) setIdle(ctx context.Context, m *member, c loop.Cycle) {
	t := r.t
	defer t.tasks.Idling(ctx, m.name, m.role)() // auto-claim: maybe a task to do before idling
	r.setStatusLater(m, registry.StatusIdle, "", func(mb *registry.Member) {
		mb.Activity = ""
		mb.Turns += c.Turns
		if c.Turns > 0 {
			mb.Cycles++
		}
	})
}

// guarded is fn for a write of m's entry that is refused (registry.ErrTakenOver)
// once the entry is no longer this worker's claim.
func (r *roster) guarded(m *member, fn func(*registry.Member)) func(*registry.Member) {
	if m.claim == "" || r.t.hosting == nil {
		return fn
	}
	worker := r.t.hosting.opts.ID
	return func(mb *registry.Member) {
		if mb.SpawnID != m.claim || mb.Worker != worker {
			mb.MarkTakenOver()
			return
		}
		if fn != nil {
			fn(mb)
		}
	}
}

// fenceOff ends m as one this process no longer runs: nothing more of it is
// written or said.
func (r *roster) fenceOff(m *member, why error) {
	if m.fenced.Swap(true) {
		return
	}
	r.t.events.Notify(event.Event{Agent: m.name, Payload: failure(event.ClassInternal, "stopped here, run elsewhere now: ", why)})
	m.cancel()
}

// fenced reports whether err says another writer took the teammate over.
func fencedError(err error) bool {
	var f interface{ Fenced() bool }
	return errors.Is(err, registry.ErrTakenOver) || errors.As(err, &f) && f.Fenced()
}

// fail marks a teammate failed after a step of class failed, and tells the lead.
func (r *roster) fail(m *member, class event.ErrorClass, err error) {
	t := r.t
	if m.fenced.Load() || fencedError(err) {
		r.fenceOff(m, err)
		return
	}
	t.faults.CheckStorage(err)
	r.setStatus(m, registry.StatusFailed, "", func(mb *registry.Member) { mb.Error = err.Error(); mb.Activity = "" })
	if !loop.Told(err) { // the loop's own error event already said it
		t.events.Emit(event.Event{Agent: m.name, Payload: failure(class, "", err)})
	}
	ctx := context.Background() // told whatever ended the teammate's context
	if _, derr := t.messenger.deliver(ctx, m.name, inbox.LeadName, inbox.TypeError, prompt.TeammateFailed(m.name, err)); derr != nil {
		t.events.Emit(event.Event{Agent: m.name, Payload: failure(event.ClassInbox, "could not tell the lead: ", derr)})
	}
}

func (r *roster) markFailed(name string, cause error) {
	t := r.t
	r.mu.Lock()
	if m, ok := r.members[name]; ok {
		m.status = registry.StatusFailed
	}
	r.mu.Unlock()
	ctx := context.Background() // a failure is recorded whatever ended its caller's context
	_ = t.reg.ChangeStatus(ctx, name, registry.StatusFailed, func(mb *registry.Member) { mb.Error = cause.Error() })
	t.events.Emit(event.Event{Agent: name, Payload: event.StatusChanged{Status: registry.StatusFailed, Reason: cause.Error(), PID: t.pid}})
	t.changed.notify()
}

// setStatus changes a member's status in memory, in the registry and in the
// event log (with why, "" for none), in that order of visibility to this
// process.
func (r *roster) setStatus(m *member, status registry.Status, why string, fn func(*registry.Member)) {
	t := r.t
	if m.fenced.Load() {
		return
	}
	r.mu.Lock()
	m.status = status
	later := r.writeLater(m, status)
	r.mu.Unlock()
	if later {
		t.reg.SetStatusLater(m.name, status, r.guarded(m, withUsage(m, fn)), func(err error) { r.statusWritten(m, status, why, err) })
		return
	}
	ctx := context.Background() // a status is written whatever ended the teammate's context, as SetStatusLater's are
	err := t.reg.ChangeStatus(ctx, m.name, status, r.guarded(m, withUsage(m, fn)))
	r.statusWritten(m, status, why, err)
}

// each calls fn for every teammate r runs, under r's lock: fn only reads.
func (r *roster) each(fn func(m *member)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.members {
		fn(m)
	}
}

func (o Options) teamName() string {
	if o.TeamName == "" {
		return "default"
	}
	return o.TeamName
}
