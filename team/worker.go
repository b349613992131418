package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/sys/gitwt"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/prompt"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/tools"
)

// Teammates on workers, on other hosts. On a team whose spawns go
// through a work queue (Options.Queue, a JetStream stream in
// internal/store/natsstore), the lead's spawn registers the teammate queued,
// delivers its prompt to its inbox and publishes a hosts.Request; any
// worker process of the team — `agentteam worker` on any host, and the
// lead's own process — takes it with a free place in its pool, claims it
// in the registry (its id, host and PID) and runs it as the lead's
// process would, with the team's inboxes, registry, board and events on
// the store, and its own model client: no key crosses the wire. The
// protocols' requests live in the process that runs the teammate: one
// asked from another process is adopted from the inboxes (team/protocol's
// remote.go).

// hosting is this process as a worker of the team (team/hosts), and what
// it does with the requests it takes (hosts.Runner): the teammates it
// runs, fences and gives back, and in the lead's process those it reaps.
type hosting struct {
	t      *Team
	host   *hosts.Host
	opts   hosts.Options // its defaults filled in
	queue  hosts.SpawnQueue
	isLead bool
}

func newHosting(t *Team, o hosts.Options, q hosts.SpawnQueue, beats hosts.Heartbeats, isLead bool) *hosting {
	switch {
	case !isLead && o.GitRemote != "":
		t.worktrees.PushTo(o.GitRemote, o.KeyEnv)
	case isLead:
		// The lead's commit goes where the workers fetch it from: the
		// team's remote, as this clone names it (--git-remote).
		t.worktrees.ShareBasesTo(o.GitRemote, o.KeyEnv)
	}
	h := &hosting{t: t, queue: q, isLead: isLead}
	h.host = hosts.New(o, hosts.Deps{Queue: q, Beats: beats, Runner: h, Pool: t.pool, Events: t.events, Failure: failure,
		PID: t.pid, Lead: isLead, Worktrees: t.opts.Isolation == worktree.IsolationWorktree})
	h.opts = h.host.Options()
	return h
}

// start runs the worker's goroutines until the team stops, and in the
// lead's process the relay of the asks teammates on workers make.
func (h *hosting) start() {
	t := h.t
	h.host.Start(t.root, &t.wg)
	if h.isLead && t.perms != nil {
		t.wg.Go(func() { t.perms.RelayRemoteAsks(t.root) })
	}
}

// Claim makes this worker the one that runs req's teammate, if the
// registry still waits for this very request.
func (h *hosting) Claim(req hosts.Request) (bool, error) {
	t := h.t
	var claimed bool
	// The teammate's entry alone: a claim decides on nothing else, and as a
	// whole-registry update it raced every spawn for the team's entry.
	ctx := context.Background() // hosts calls Claim without a context
	err := t.reg.ChangeTeammate(ctx, req.Name, func(m *registry.Member) error {
		claimed = false
		if m.SpawnID != req.ID || m.Status != registry.StatusQueued || m.Worker != "" {
			return statefile.ErrNoChange
		}
		m.Worker, m.Host, m.PID, m.UpdatedAt = h.opts.ID, h.opts.Host, t.pid, time.Now().UTC()
		if req.Base != "" {
			// Kept for a respawn: reapDead makes its request from this entry.
			m.Base = req.Base
		}
		claimed = true
		return nil
	})
	if errors.As(err, new(registry.NoTeammateError)) {
		return false, nil
	}
	return claimed, err
}

// Unplaced fails a request no worker could take in time, and tells whoever asked.
func (h *hosting) Unplaced(req hosts.Request) {
	t := h.t
	why := fmt.Sprintf("no worker with the labels %s took it within its placement time", strings.Join(req.Labels, ", "))
	var failed bool
	ctx := context.Background() // hosts calls Unplaced without a context
	err := t.reg.Change(ctx, func(c *registry.Config) error {
		failed = false
		i := c.Find(req.Name)
		if i < 0 || c.Teammates[i].SpawnID != req.ID || c.Teammates[i].Status != registry.StatusQueued || c.Teammates[i].Worker != "" {
			return statefile.ErrNoChange
		}
		m := &c.Teammates[i]
		m.Status, m.Error, m.UpdatedAt = registry.StatusFailed, why, time.Now().UTC()
		failed = true
		return nil
	})
	if err != nil || !failed {
		return
	}
	t.events.Emit(event.Event{Agent: req.Name, Payload: event.StatusChanged{Role: req.Role, Status: registry.StatusFailed, Reason: why, PID: t.pid}})
	if _, err := t.messenger.deliver(ctx, req.Name, req.From, inbox.TypeError, prompt.TeammateFailed(req.Name, fmt.Errorf("%s", why))); err != nil {
		t.events.Emit(event.Event{Agent: req.Name, Payload: failure(event.ClassInbox, "could not tell "+req.From+": ", err)})
	}
}

// Run starts the teammate req names in this process; the pool's place
// is its first cycle's. It reports whether the teammate started.
func (h *hosting) Run(req hosts.Request, release func()) bool {
	t, r := h.t, h.t.roster
	ctx := context.Background() // hosts calls Run without a context
	failed := func(class event.ErrorClass, err error) bool {
		r.markFailed(req.Name, err)
		t.events.Emit(event.Event{Agent: req.Name, Payload: failure(class, "", err)})
		if _, derr := t.messenger.deliver(ctx, req.Name, inbox.LeadName, inbox.TypeError, prompt.TeammateFailed(req.Name, err)); derr != nil {
			t.events.Emit(event.Event{Agent: req.Name, Payload: failure(event.ClassInbox, "could not tell the lead: ", derr)})
		}
		return false
	}
	choice, err := t.meters.resolve(req.Provider, req.Model, req.Role)
	if err != nil {
		return failed(event.ClassModel, fmt.Errorf("worker %s cannot run %s: %w", h.opts.ID, req.Name, err))
	}
	var entry registry.Member
	iso := req.Isolation
	if iso == "" || !h.isLead && t.opts.Isolation == worktree.IsolationWorktree {
		// The request says the lead's choice (an older lead's says none);
		// a worker whose person asked for worktrees keeps its clone's
		// checkout out of reach whatever the lead says: the stricter wins.
		iso = t.placing.isolationOf("")
	}
	where, err := t.placing.placeFrom(ctx, req.Name, iso, &entry, worktree.Start{Base: req.Base, Fresh: !req.Resume})
	if err != nil {
		return failed(event.ClassInternal, fmt.Errorf("worker %s cannot place %s: %w", h.opts.ID, req.Name, err))
	}
	if where.Root != "" {
		t.worktrees.Record(ctx, req.Name, func(e *registry.Member) {
			e.Isolation, e.Worktree, e.Branch, e.Merged, e.BaseNote = entry.Isolation, entry.Worktree, entry.Branch, false, entry.BaseNote
		})
	}
	// An earlier teammate of this name run here (a respawn) ends first.
	r.mu.Lock()
	old := r.members[req.Name]
	r.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	if t.opts.Sessions == nil && !req.Resume {
		// The lead archived it in a shared session store at its spawn; a
		// file of this worker's workspace is archived here.
		sessions.ArchiveFile(t.ws.SessionPath(req.Name), time.Now().UTC())
	}
	mctx, cancel := context.WithCancel(t.root)
	var used registry.Usage
	if req.Resume {
		// It goes on: its usage so far and its plan's approval stay.
		if c, err := t.reg.Read(ctx); err == nil {
			if i := c.Find(req.Name); i >= 0 {
				used = c.Teammates[i].Usage()
			}
		}
	}
	m := &member{name: req.Name, role: req.Role, cancel: cancel, done: make(chan struct{}), status: registry.StatusQueued,
		planMode: req.PlanMode, root: where.Root, model: t.meters.forAgent(choice, used), claim: req.ID, request: req}
	m.planFromRegistry = func() bool {
		// Asked by the write gate and RefreshPlan, which have no context.
		return t.plans.ApprovedElsewhere(context.Background(), mate{r, m})
	}
	t.perms.Follow(req.Name, req.Asks, req.AskTimeout, req.Mode)
	if !h.isLead { // the lead's own process has its rules already
		t.perms.FollowDeny(req.Name, req.Deny)
	}
	agent, err := r.newTeammateAgent(mctx, m, "startup") // its own life's context: Run is given none
	if err != nil {
		cancel()
		return failed(event.ClassSession, err)
	}
	m.agent = agent
	r.mu.Lock()
	r.members[req.Name] = m
	r.mu.Unlock()
	t.events.Emit(event.Event{Agent: req.Name, Payload: event.StatusChanged{Role: req.Role, Status: registry.StatusQueued,
		Reason: fmt.Sprintf("taken by worker %s on %s", h.opts.ID, h.opts.Host), PID: t.pid}})
	t.wg.Add(1)
	go r.runTeammate(mctx, m, func(context.Context) (func(), error) { return release, nil })
	return true
}

// spawnQueued is spawn on a team with a work queue: the teammate is
// registered queued, its prompt delivered, and the request published for
// whichever worker may take it.
func (r *roster) spawnQueued(ctx context.Context, from string, spec tools.SpawnSpec, role string, choice models.ModelChoice) error {
	t, h := r.t, r.t.hosting
	name := spec.Name
	labels := hosts.NormalLabels(spec.Labels)
	if len(labels) == 0 {
		labels = hosts.NormalLabels(t.opts.RoleLabels[role])
	}
	for _, l := range labels {
		if err := tools.CheckLabel(l); err != nil {
			return err
		}
	}
	// The lead's default travels with the spawn: a lead started with
	// --isolation worktree expects its teammates in worktrees wherever they
	// run, not in a worker's checkout because the model did not say.
	iso := t.placing.isolationOf(spec.Isolation)
	id := spawnRequestID(ctx, name)
	now := time.Now().UTC()
	entry := registry.Member{Name: name, Role: role, Status: registry.StatusQueued, CreatedAt: now, UpdatedAt: now, PID: t.pid,
		PlanMode: spec.PlanMode, ModelRef: modelRefOf(choice), Labels: labels, SpawnID: id}
	if spec.PlanMode {
		entry.PlanState = registry.PlanDrafting
	}
	err := t.reg.Change(ctx, func(c *registry.Config) error {
		i := c.Find(name)
		if i >= 0 {
			// This spawn's own entry, queued by this process or since taken
			// by a worker: an earlier try of this change was stored though
			// its answer was lost, and the store decides again on it.
			old := c.Teammates[i]
			if old.SpawnID == id && old.Status.Live() && !old.Ended && (old.PID == t.pid || old.Worker != "") {
				return nil
			}
		}
		if err := queueRoom(c, name, t.opts.MaxQueue); err != nil {
			return err
		}
		if i < 0 {
			c.Teammates = append(c.Teammates, entry)
			return nil
		}
		if old := c.Teammates[i]; h.liveElsewhere(old) {
			return fmt.Errorf("a teammate named %s already exists (status %s): send it a message instead", name, old.Status)
		}
		c.Teammates[i] = entry
		return nil
	})
	if err != nil {
		return err
	}
	if err := t.mates.archive(ctx, name, now); err != nil {
		r.markFailed(name, err)
		return err
	}
	t.events.Emit(event.Event{Agent: name, Payload: event.Spawn{Role: role, Status: registry.StatusQueued, From: from, PID: t.pid, Model: choice.Label()}})
	prompt, err := t.messenger.deliver(ctx, from, name, inbox.TypeMessage, spec.Prompt)
	if err != nil {
		r.markFailed(name, err)
		return err
	}
	// A worktree teammate starts from the lead's work, not the worker's
	// clone: the commit is put on the team's remote for it — for one of
	// isolation none too when a worker whose own isolation is worktree may
	// take it (its heartbeat says so; one started later says when it could
	// not start there). After the registry took the name: a refused spawn
	// overwrites no live base.
	push := iso == worktree.IsolationWorktree || t.worktrees.Shares() && h.host.WorktreeOffered(ctx, labels)
	base, berr := t.worktrees.ShareBase(ctx, name, push)
	if berr != nil && base != "" && !errors.Is(berr, gitwt.ErrNoRemote) {
		t.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInternal, "", berr)})
	}
	err = h.publish(ctx, withRules(t.perms, hosts.Request{ID: id, Name: name, Role: role, From: from, PromptID: prompt.ID,
		Provider: choice.Provider, Model: choice.Name, PlanMode: spec.PlanMode, Isolation: iso, Labels: labels, Base: base,
		Deadline: now.Add(h.opts.Placement)}))
	if err != nil {
		err = fmt.Errorf("queue the spawn of %s: %w", name, err)
		r.markFailed(name, err)
		return err
	}
	return nil
}

// spawnRequestID is the request's id: from the lead's tool call when there
// is one, so the spawn sent again by a lead resumed after a crash is the
// same request (Nats-Msg-Id), else new.
func spawnRequestID(ctx context.Context, name string) string {
	if call := tools.CallID(ctx); call != "" {
		return "spawn-" + name + "-" + call
	}
	return "spawn-" + name + "-" + uuid.NewString()
}

// liveElsewhere reports whether a registry entry is a teammate some
// worker still runs (or that waits for one): its name is taken.
func (h *hosting) liveElsewhere(m registry.Member) bool {
	if !m.Status.Live() {
		return false
	}
	if m.Worker == "" {
		return m.Status == registry.StatusQueued && m.PID == h.t.pid // waits for a worker
	}
	return h.host.Alive(m.Worker)
}

// Fence stops every teammate this worker runs, as no longer its own; the
// func it returns gives them back (hosts.Runner).
func (h *hosting) Fence(why error) func(ctx context.Context) {
	fenced := h.fence(why)
	return func(ctx context.Context) { h.giveBack(ctx, fenced) }
}

// fence stops every teammate this worker runs and returns them.
func (h *hosting) fence(why error) []*member {
	r := h.t.roster
	err := fmt.Errorf("worker %s lost its heartbeat (%w); its teammates are respawned elsewhere", h.opts.ID, why)
	r.mu.Lock()
	list := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		list = append(list, m)
	}
	r.mu.Unlock()
	for _, m := range list {
		r.fenceOff(m, err)
	}
	for _, m := range list {
		<-m.done
		r.mu.Lock()
		if r.members[m.name] == m {
			delete(r.members, m.name)
		}
		r.mu.Unlock()
	}
	return list
}

// giveBack, once this worker holds a heartbeat again, respawns here the
// teammates it fenced that the registry still shows live here: nobody
// runs them, and the lead's process, which respawns a dead worker's, may
// never have seen this one's heartbeat gone (a blip shorter than its
// look, or its own watch cut meanwhile). Each goes on from its
// conversation (or is failed, as reapDead does) under a new claim, in one
// change guarded by its old one, so a respawn the lead made first is left
// alone and only one is made. It runs here rather than through the work
// queue: a worker publishes no spawn request, which only the team's lead
// may sign (spawnsign.go).
func (h *hosting) giveBack(ctx context.Context, fenced []*member) {
	t := h.t
	respawn := t.opts.Sessions != nil
	now := time.Now().UTC()
	for _, fm := range fenced {
		if fm.claim == "" {
			continue
		}
		why := fmt.Errorf("its worker %s on %s lost its heartbeat and stopped it", h.opts.ID, h.opts.Host)
		var d registry.Member
		var req hosts.Request
		err := t.reg.Change(ctx, func(c *registry.Config) error {
			d = registry.Member{} // a change tried again decides afresh
			i := c.Find(fm.name)
			if i < 0 {
				return statefile.ErrNoChange
			}
			m := &c.Teammates[i]
			if m.SpawnID != fm.claim || m.Worker != h.opts.ID || m.Ended ||
				m.Status != registry.StatusQueued && m.Status != registry.StatusWorking && m.Status != registry.StatusIdle {
				return statefile.ErrNoChange // respawned already, or it ended
			}
			d = *m
			req = fm.request
			req.ID, req.Resume, req.Deadline = "spawn-"+m.Name+"-"+uuid.NewString(), true, now.Add(h.opts.Placement)
			h.requeue(m, req.ID, why.Error(), respawn, now)
			if respawn { // taken by this worker at once
				m.Worker, m.Host = h.opts.ID, h.opts.Host
			}
			return nil
		})
		if err != nil {
			t.events.Emit(event.Event{Agent: fm.name, Payload: failure(event.ClassRegistry, "give back after a lost heartbeat: ", err)})
			continue
		}
		if d.Name == "" {
			continue
		}
		h.tellRespawn(d, why, respawn, "on this worker")
		if !respawn {
			continue
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			release, err := t.pool.Acquire(ctx)
			if err != nil {
				t.roster.markFailed(req.Name, fmt.Errorf("respawn after %w: %w", why, err))
				return
			}
			if !h.Run(req, release) {
				release()
			}
		}()
	}
	if len(fenced) > 0 {
		t.changed.notify()
	}
}

// requeue changes a dead teammate's entry m: queued for request id when
// it is respawned, failed otherwise.
func (h *hosting) requeue(m *registry.Member, id, why string, respawn bool, now time.Time) {
	m.Activity, m.UpdatedAt = "", now
	if !respawn {
		m.Status, m.Error = registry.StatusFailed, why
		return
	}
	m.Status, m.Error, m.Worker, m.Host, m.PID, m.SpawnID = registry.StatusQueued, why+"; respawned", "", "", h.t.pid, id
}

// Reap marks failed, in the lead's process, the teammates of workers
// whose heartbeat is gone, and tells the lead. With the teammates'
// conversations in the team's session store, each is then respawned: a
// request to resume it goes on the queue, and whichever worker takes it
// goes on from its conversation, its inbox's read position keeping every
// message delivered once. The registry goes from the dead worker's status
// to queued in one change, so the team never looks settled in between.
func (h *hosting) Reap(alive map[string]bool) {
	t := h.t
	respawn := t.opts.Sessions != nil
	var dead []registry.Member
	var requests []hosts.Request
	now := time.Now().UTC()
	ctx := context.Background() // hosts calls Reap without a context
	_ = t.reg.Change(ctx, func(c *registry.Config) error {
		dead, requests = dead[:0], requests[:0]
		for i := range c.Teammates {
			m := &c.Teammates[i]
			if m.Worker == "" || m.Worker == h.opts.ID || alive[m.Worker] || m.Ended {
				continue
			}
			if m.Status != registry.StatusQueued && m.Status != registry.StatusWorking && m.Status != registry.StatusIdle {
				continue
			}
			dead = append(dead, *m)
			why := fmt.Sprintf("its worker %s on %s stopped (no heartbeat)", m.Worker, m.Host)
			id := "spawn-" + m.Name + "-" + uuid.NewString()
			// A respawn goes on with the teammate's own work: its pushed
			// branch when it pushed one (ensure), else a new branch from the
			// lead's commit its first run started from, not the new worker's HEAD.
			base := m.Base
			if !gitwt.IsCommitID(base) {
				base = "" // an edited registry's: a worker would drop the whole request
			}
			requests = append(requests, withRules(t.perms, hosts.Request{ID: id, Name: m.Name, Role: m.Role, From: inbox.LeadName,
				Provider: m.Provider, Model: m.ModelName, PlanMode: m.PlanMode, Isolation: m.Isolation, Labels: m.Labels, Base: base,
				Deadline: now.Add(h.opts.Placement), Resume: true}))
			h.requeue(m, id, why, respawn, now)
		}
		if len(dead) == 0 {
			return statefile.ErrNoChange
		}
		return nil
	})
	for i, d := range dead {
		h.announceRespawn(d, requests[i], fmt.Errorf("its worker %s on %s stopped (no heartbeat)", d.Worker, d.Host), respawn)
	}
	if len(dead) > 0 {
		t.changed.notify()
	}
}

// announceRespawn, after its entry was requeued, logs that teammate d
// failed for err, tells the lead, and, when it is respawned, publishes req.
func (h *hosting) announceRespawn(d registry.Member, req hosts.Request, err error, respawn bool) {
	t := h.t
	h.tellRespawn(d, err, respawn, "on another worker")
	if !respawn {
		return
	}
	if merr := h.publish(context.Background(), req); merr != nil {
		t.roster.markFailed(d.Name, fmt.Errorf("respawn after %w: %w", err, merr))
	}
}

// tellRespawn logs that teammate d failed for err and tells the lead; one
// respawned (where: "on another worker") is then logged queued again.
func (h *hosting) tellRespawn(d registry.Member, err error, respawn bool, where string) {
	t := h.t
	t.events.Emit(event.Event{Agent: d.Name, Payload: event.StatusChanged{Role: d.Role, Status: registry.StatusFailed, Reason: err.Error(), PID: t.pid}})
	text := prompt.TeammateFailed(d.Name, err)
	if respawn {
		text += " It is respawned " + where + " and goes on from its conversation."
	}
	ctx := context.Background() // a failure is told whatever ended the teammate's context
	if _, derr := t.messenger.deliver(ctx, d.Name, inbox.LeadName, inbox.TypeError, text); derr != nil {
		t.events.Emit(event.Event{Agent: d.Name, Payload: failure(event.ClassInbox, "could not tell the lead: ", derr)})
	}
	if respawn {
		t.events.Emit(event.Event{Agent: d.Name, Payload: event.StatusChanged{Role: d.Role, Status: registry.StatusQueued, Reason: "respawned: " + err.Error(), PID: t.pid}})
	}
}

// runsElsewhere is, at the lead's Open, the test of a registry entry left
// queued or working: still run by a live worker of a team across hosts
// (heard of now), else left by a process that is gone. On a team
// without a work queue (h nil) nothing runs elsewhere.
func (h *hosting) runsElsewhere() func(*registry.Member) bool {
	if h == nil || h.host.Beats() == nil {
		return func(*registry.Member) bool { return false }
	}
	alive, err := h.host.Beats().Alive(context.Background())
	return func(m *registry.Member) bool {
		if m.Worker == "" {
			return false
		}
		if err != nil {
			return true // not known: the heartbeats' watch decides later
		}
		_, ok := alive[m.Worker]
		return ok
	}
}

// remote is the registry's entry of a teammate another process runs (or
// that waits for a worker), on a team with a work queue; none when h is
// nil (no queue).
func (h *hosting) remote(ctx context.Context, name string) (registry.Member, bool) {
	if h == nil || h.t.roster.runs(name) {
		return registry.Member{}, false
	}
	c, err := h.t.reg.Read(ctx)
	if err != nil {
		return registry.Member{}, false
	}
	i := c.Find(name)
	if i < 0 {
		return registry.Member{}, false
	}
	return c.Teammates[i], true
}

// remoteSettled reports, in the lead's process, whether no teammate run
// elsewhere is queued or working or has unread messages. The statuses are
// looked at first, all of them: an inbox is asked (a request to the store
// each) only once none works, not for every idle teammate at every look.
func (h *hosting) remoteSettled(ctx context.Context) bool {
	t := h.t
	c, err := t.reg.Read(ctx)
	if err != nil {
		return false
	}
	var idle []string
	for _, m := range c.Teammates {
		if t.roster.runs(m.Name) {
			continue
		}
		switch m.Status {
		case registry.StatusQueued, registry.StatusWorking:
			return false
		case registry.StatusIdle:
			idle = append(idle, m.Name)
		}
	}
	for _, name := range idle {
		if t.inboxes.hasUnread(ctx, name) {
			return false
		}
	}
	return true
}

// shutdownRemote asks every live teammate run elsewhere to shut down and
// waits, within the shutdown timeout and a little more, for each to end;
// one still waiting for a worker is shut down at once. Their answers are
// then taken into the lead's conversation, so none is left unread.
func (h *hosting) shutdownRemote(reason string) {
	if h.askRemoteToStop(reason) {
		if _, err := h.t.lead.Absorb(); err != nil {
			h.t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: failure(event.ClassInbox, "take the shutdown answers: ", err)})
		}
	}
}

// askRemoteToStop is shutdownRemote but for the answers; it reports
// whether any teammate was asked.
func (h *hosting) askRemoteToStop(reason string) bool {
	waitFor := h.sendRemoteStops(reason)
	if len(waitFor) == 0 {
		return false
	}
	h.waitRemoteStops(waitFor)
	return true
}

// remoteStopsAtOnce bounds the shutdown requests sendRemoteStops has
// under way at once: each is a few round trips to the store.
const remoteStopsAtOnce = 8

// sendRemoteStops asks every live teammate run on another worker to shut
// down (one not yet taken is shut down at once) and returns the names
// asked, without waiting for their answers. The requests go out a few at
// a time, each with the registry entry read here (no read per teammate).
func (h *hosting) sendRemoteStops(reason string) []string {
	t := h.t
	ctx := context.Background() // ShutdownAll and Abort are given no context: the requests go out in full
	c, err := t.reg.Read(ctx)
	if err != nil {
		t.events.Emit(event.Event{Payload: failure(event.ClassRegistry, "shut down the teammates on workers: ", err)})
		return nil
	}
	var ask []registry.Member
	for _, m := range c.Teammates {
		if t.roster.runs(m.Name) || m.Ended {
			continue
		}
		if !m.Status.Live() {
			continue
		}
		if m.Status == registry.StatusQueued && m.Worker == "" {
			h.cancelQueued(ctx, m, reason)
			continue
		}
		ask = append(ask, m)
	}
	asked := make([]bool, len(ask))
	var wg sync.WaitGroup
	slots := make(chan struct{}, remoteStopsAtOnce)
	for i, m := range ask {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if _, err := t.shutdowns.RequestRemote(ctx, inbox.LeadName, m, reason); err != nil {
				t.events.Emit(event.Event{Agent: m.Name, Payload: failure(event.ClassInbox, "shutdown request: ", err)})
				return
			}
			asked[i] = true
		}()
	}
	wg.Wait()
	var waitFor []string
	for i, m := range ask {
		if asked[i] {
			waitFor = append(waitFor, m.Name)
		}
	}
	return waitFor
}

// remoteStopsPoll is how often waitRemoteStops reads the registry between
// wake-ups: every teammate answers in the lead's inbox before its status
// changes, so the inbox's watch wakes it first, and the poll finds the
// status soon after.
const remoteStopsPoll = 100 * time.Millisecond

// waitRemoteStops waits, bounded by the shutdown timeout, until the
// teammates asked have shut down (or failed).
func (h *hosting) waitRemoteStops(waitFor []string) {
	t := h.t
	deadline := time.Now().Add(t.opts.ShutdownTimeout + 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answers := t.store.Watch(ctx, inbox.LeadName)
	tick := time.NewTicker(min(t.opts.PollInterval, remoteStopsPoll))
	defer tick.Stop()
	for {
		c, err := t.reg.Read(ctx)
		if err == nil {
			left := waitFor[:0:0]
			for _, name := range waitFor {
				if i := c.Find(name); i >= 0 && (c.Teammates[i].Status == registry.StatusShutdown || c.Teammates[i].Status == registry.StatusFailed) {
					continue
				}
				left = append(left, name)
			}
			waitFor = left
		}
		if len(waitFor) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, name := range waitFor {
				t.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInternal, "",
					fmt.Errorf("%s, run on another worker, did not shut down within %s", name, t.opts.ShutdownTimeout))})
			}
			return
		}
		select {
		case <-answers:
		case <-tick.C:
		}
	}
}

// cancelQueued shuts down a teammate no worker has taken yet: a worker
// that takes its request later finds it no longer queued.
func (h *hosting) cancelQueued(ctx context.Context, m registry.Member, reason string) {
	t := h.t
	var done bool
	err := t.reg.Change(ctx, func(c *registry.Config) error {
		done = false
		i := c.Find(m.Name)
		if i < 0 || c.Teammates[i].Status != registry.StatusQueued || c.Teammates[i].Worker != "" {
			return statefile.ErrNoChange
		}
		e := &c.Teammates[i]
		e.Status, e.Ended, e.UpdatedAt = registry.StatusShutdown, true, time.Now().UTC()
		done = true
		return nil
	})
	if err == nil && done {
		t.events.Emit(event.Event{Agent: m.Name, Payload: event.StatusChanged{Role: m.Role, Status: registry.StatusShutdown, Reason: reason + " (before a worker took it)", PID: t.pid}})
	}
}

// Serve runs a worker's team (OpenWorker) until ctx ends: it takes spawn
// requests and runs their teammates. Then its teammates are stopped and
// shut down, the lead told of each that was still live, and its
// heartbeat removed; Close is still the caller's.
func (t *Team) Serve(ctx context.Context) error {
	if t.hosting == nil {
		return fmt.Errorf("team: not a worker: no work queue")
	}
	<-ctx.Done()
	t.hosting.stopAll("its worker " + t.hosting.opts.ID + " stopped")
	return nil
}

// WorkerID is this process's id as a worker ("" without a work queue).
func (t *Team) WorkerID() string {
	if t.hosting == nil {
		return ""
	}
	return t.hosting.opts.ID
}

// stopAll stops every teammate this worker runs: each ends shut down
// (its conversation and inbox intact), never left working, and the lead
// hears of each that was not shut down already.
func (h *hosting) stopAll(reason string) {
	t := h.t
	var live []string
	t.roster.mu.Lock()
	for _, m := range t.roster.members {
		if m.status.Live() && !m.fenced.Load() {
			live = append(live, m.name)
		}
	}
	t.roster.mu.Unlock()
	t.roster.stopAll(func(m *registry.Member) {
		if m.Status.Live() {
			m.Status, m.Activity, m.Error = registry.StatusShutdown, "", reason
		}
	}, reason)
	t.reg.Flush()
	ctx := context.Background() // stopAll is given no context: the lead is told of each
	for _, name := range live {
		if _, err := t.messenger.deliver(ctx, name, inbox.LeadName, inbox.TypeError,
			fmt.Sprintf("%s was shut down: %s. Spawn it again to go on.", name, reason)); err != nil {
			t.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInbox, "could not tell the lead: ", err)})
		}
	}
}
