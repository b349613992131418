package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/gitwt"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Teammates on workers, on other hosts. On a team whose spawns go
// through a work queue (Options.Queue, a JetStream stream in
// internal/store/natsstore), the lead's spawn registers the teammate queued,
// delivers its prompt to its inbox and publishes a SpawnRequest; any
// worker process of the team — `agentteam worker` on any host, and the
// lead's own process — takes it with a free place in its pool, claims it
// in the registry (its id, host and PID) and runs it as the lead's
// process would, with the team's inboxes, registry, board and events on
// the store, and its own model client: no key crosses the wire. The
// protocols' requests live in the process that runs the teammate: one
// asked from another process is adopted from the inboxes (shutdown.go,
// plan.go call in here).

// SpawnQueue is the team's work queue of spawn requests, shared by every
// worker (natsstore.Queue): a request is taken by one worker at a time.
type SpawnQueue interface {
	// Publish stores one request under id; the same id again is one request.
	Publish(ctx context.Context, id string, data []byte) error
	// Next waits for a request and takes it, until ctx ends.
	Next(ctx context.Context) (QueueJob, error)
}

// QueueJob is a request taken from the queue.
type QueueJob interface {
	Data() []byte
	Delivered() int // how often it was handed to a worker, this time included
	Ack(ctx context.Context) error
	Nak(delay time.Duration) error // back to the queue, offered again after delay
	Term() error                   // dropped for good
}

// Heartbeats are the workers' heartbeats (natsstore.Workers): a lease per
// worker that expires unless renewed.
type Heartbeats interface {
	// Hold takes worker id's heartbeat and keeps it alive until Release,
	// or until it is lost (not renewed within a bound shorter than its
	// time to live: this worker may be cut off). It fails while another
	// holds id or its heartbeat has not expired yet.
	Hold(ctx context.Context, id string, info []byte) (Heartbeat, error)
	// Watch reports each present heartbeat, then every change; current
	// is closed once the present ones are all given.
	Watch(ctx context.Context) (changes <-chan WorkerChange, current <-chan struct{}, err error)
	// Alive lists the workers whose heartbeat is alive now.
	Alive(ctx context.Context) (map[string][]byte, error)
}

// Heartbeat is this worker's, held.
type Heartbeat interface {
	Lost() <-chan struct{}
	Err() error
	Release(ctx context.Context) error
}

// WorkerChange is a worker's heartbeat seen, or gone (expired, released).
type WorkerChange struct {
	ID   string
	Gone bool
}

// WorkerOptions say who this process is as one of a team's workers.
type WorkerOptions struct {
	// ID names the worker in the registry and its heartbeat (letters,
	// digits, '-' and '_'); default HOST-PID.
	ID string
	// Host is where it runs; default the host name.
	Host string
	// Labels are what it offers: it takes only requests whose labels it all has.
	Labels []string
	// Placement bounds, in the lead's process, how long a spawn may wait
	// for a worker with its labels; then it fails. Default DefaultPlacement.
	Placement time.Duration
	// Beat is how often the heartbeat is renewed (default 2s); a worker
	// not heard of for the heartbeat's TTL is taken for dead.
	Beat time.Duration
	// GitRemote is the remote of this clone the team's work goes through
	// (worktree.go): on a worker that is not the lead's process each
	// teammate's branch is pushed there; in the lead's, the commit a
	// worktree teammate starts from ("" for both: none). KeyEnv names the
	// model API key's variable, which git never gets.
	GitRemote, KeyEnv string
}

// DefaultPlacement bounds the wait of a spawn for a worker that may take it.
const DefaultPlacement = time.Minute

// placementRetry is how long a request a worker may not take waits before
// it is offered again; maxPlacementTries bounds its offers whatever the time.
const (
	placementRetry    = 300 * time.Millisecond
	maxPlacementTries = 2000
)

// SpawnRequest is one spawn on the work queue: who to run and how. The
// prompt is not in it: the lead delivered it to the teammate's inbox
// first (PromptID), so the worker finds it there like any message.
type SpawnRequest struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Role      string   `json:"role"`
	From      string   `json:"from"`
	PromptID  string   `json:"promptId,omitempty"`
	Provider  string   `json:"provider,omitempty"`
	Model     string   `json:"model,omitempty"`
	PlanMode  bool     `json:"planMode,omitempty"`
	Isolation string   `json:"isolation,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	// Base, for isolation worktree, is the lead's HEAD commit: the worker
	// starts the teammate's branch there (fetched from the team's git
	// remote), not at its own clone's HEAD, which may be behind.
	Base string `json:"base,omitempty"`
	// Deadline: a request nobody could take by then is failed.
	Deadline time.Time `json:"deadline"`
	// Resume: the teammate goes on with its conversation in the team's
	// session store (its worker died), instead of starting afresh.
	Resume bool `json:"resume,omitempty"`
	// Asks: who answers the teammate's permission asks (user, lead, or ""
	// for nobody), for a worker that follows the team (permission_remote.go).
	Asks string `json:"asks,omitempty"`
	// AskTimeout: how long each of those asks waits for its answer.
	AskTimeout time.Duration `json:"askTimeout,omitempty"`
	// Mode: the lead's permission mode, which a worker whose person set
	// none runs the teammate in (PermissionOptions.FollowMode).
	Mode permission.Mode `json:"mode,omitempty"`
	// Deny: the lead's deny rules, added to the worker's own for this
	// teammate (permission_deny.go); its allow rules never travel.
	Deny []string `json:"deny,omitempty"`
	// LeadClaim and Signature: the lead's sender claim when it published
	// the request, and its signature with that claim's key (spawnsign.go).
	LeadClaim uint64 `json:"leadClaim,omitempty"`
	Signature []byte `json:"signature,omitempty"`
}

// check refuses a request no lead of ours would send: it came off the
// wire and names a teammate, a model and a place.
func (q *SpawnRequest) check() error {
	if q.ID == "" || len(q.ID) > 200 {
		return fmt.Errorf("no usable request id")
	}
	if err := workspace.ValidateTeammateName(q.Name); err != nil {
		return err
	}
	if err := workspace.ValidateName(q.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if q.Role = strings.TrimSpace(q.Role); q.Role == "" || len(q.Role) > 200 {
		return fmt.Errorf("role: empty or over 200 bytes")
	}
	if len(q.Provider) > 200 || len(q.Model) > 200 {
		return fmt.Errorf("model: over 200 bytes")
	}
	if err := CheckIsolation(q.Isolation); err != nil {
		return err
	}
	if q.Base != "" && !gitwt.IsCommitID(q.Base) {
		return fmt.Errorf("base: %.80q is no commit id", q.Base)
	}
	if err := permgate.CheckAsks(q.Asks, q.AskTimeout, q.Mode); err != nil {
		return err
	}
	if err := permgate.CheckDeny(q.Deny); err != nil {
		return err
	}
	for _, l := range q.Labels {
		if err := tools.CheckLabel(l); err != nil {
			return err
		}
	}
	return nil
}

// hosting is this process as a worker of the team: it takes spawn
// requests from the queue, keeps its heartbeat, and, in the lead's
// process, watches the others'.
type hosting struct {
	t      *Team
	opts   WorkerOptions
	queue  SpawnQueue
	beats  Heartbeats // nil: no heartbeats; every worker is taken for alive
	info   []byte     // what the heartbeat says of this worker
	self   WorkerInfo // the same, unencoded
	isLead bool

	mu    sync.Mutex
	alive map[string]bool // the workers heard of at the last look; nil before one

	// unheld is set while this worker holds no heartbeat (lost, not yet
	// taken again): it takes no spawn then, as the lead may take it for dead.
	unheld atomic.Bool
	// offers are what each worker alive at offersAt says of itself (this
	// one included), from their heartbeats: read again when a spawn would
	// fail for want of a worker (offeredAlive) or may land on a worker in
	// worktrees (worktreeOffered), at most once a Beat.
	offers   []WorkerInfo
	offersAt time.Time
}

func newHosting(t *Team, o WorkerOptions, q SpawnQueue, beats Heartbeats, isLead bool) *hosting {
	if o.Host == "" {
		o.Host, _ = os.Hostname()
		if o.Host == "" {
			o.Host = "localhost"
		}
	}
	if o.ID == "" {
		o.ID = WorkerID(o.Host, t.pid)
	}
	if o.Placement <= 0 {
		o.Placement = DefaultPlacement
	}
	if o.Beat <= 0 {
		o.Beat = 2 * time.Second
	}
	o.Labels = normalLabels(o.Labels)
	switch {
	case !isLead && o.GitRemote != "":
		t.worktrees.PushTo(o.GitRemote, o.KeyEnv)
	case isLead:
		// The lead's commit goes where the workers fetch it from: the
		// team's remote, as this clone names it (--git-remote).
		t.worktrees.ShareBasesTo(o.GitRemote, o.KeyEnv)
	}
	self := WorkerInfo{Host: o.Host, PID: t.pid, Labels: o.Labels, Lead: isLead, Since: time.Now().UTC()}
	if t.opts.Isolation == IsolationWorktree {
		self.Isolation = IsolationWorktree
	}
	info, _ := json.Marshal(self)
	return &hosting{t: t, opts: o, queue: q, beats: beats, info: info, self: self, isLead: isLead}
}

// WorkerInfo is what a worker's heartbeat says of it.
type WorkerInfo struct {
	Host   string   `json:"host"`
	PID    int      `json:"pid"`
	Labels []string `json:"labels,omitempty"`
	Lead   bool     `json:"lead,omitempty"`
	// Since is when it started: an ask older than that is not its to wait for.
	Since time.Time `json:"since,omitzero"`
	// Isolation is "worktree" when its person asked for worktrees: it runs
	// every teammate in one, from the lead's commit (SpawnRequest.Base).
	Isolation string `json:"isolation,omitempty"`
}

// WorkerID is a worker's default id: its host and PID as one token.
func WorkerID(host string, pid int) string {
	var b strings.Builder
	for _, r := range host {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	id := b.String()
	if len(id) > 40 {
		id = id[:40]
	}
	return id + "-" + strconv.Itoa(pid)
}

// normalLabels are labels sorted without repeats; nil for none.
func normalLabels(ls []string) []string {
	if len(ls) == 0 {
		return nil
	}
	out := slices.Clone(ls)
	slices.Sort(out)
	return slices.Compact(out)
}

// start runs the worker's goroutines until the team stops: the heartbeat
// first (a worker is alive before it takes anything), then the queue.
func (h *hosting) start() {
	t := h.t
	ctx, cancel := context.WithCancel(t.root)
	if h.beats != nil {
		beat := h.hold(ctx)
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			h.beatLoop(ctx, beat)
		}()
		if h.isLead {
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				h.watchWorkers(ctx)
			}()
		}
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		h.serve(ctx)
	}()
	if h.isLead && h.t.perms != nil {
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			h.t.perms.RelayRemoteAsks(ctx)
		}()
	}
}

// serve takes requests while the pool has a free place: at most
// MaxWorkers teammates of this process run a cycle at once.
func (h *hosting) serve(ctx context.Context) {
	t := h.t
	var failing bool
	for {
		if h.unheld.Load() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(h.opts.Beat):
			}
			continue
		}
		release, err := t.pool.Acquire(ctx)
		if err != nil {
			return
		}
		job, err := h.queue.Next(ctx)
		if err != nil {
			release()
			if ctx.Err() != nil {
				return
			}
			if !failing { // said once per outage
				t.events.Emit(Event{Payload: failure(ClassInternal, "work queue: ", err)})
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		failing = false
		taken, givenBack := h.take(ctx, job, release)
		if !taken {
			release()
		}
		if givenBack {
			// The server offers a request given back to the first pull
			// waiting: not pulling for a while lets another worker have it.
			select {
			case <-ctx.Done():
				return
			case <-time.After(placementRetry + rand.N(placementRetry)):
			}
		}
	}
}

// take runs the request job holds with the pool's place release, or gives
// it back; it reports whether the place went to a teammate, and whether
// the request was given back for another worker.
func (h *hosting) take(ctx context.Context, job QueueJob, release func()) (taken, givenBack bool) {
	t := h.t
	var req SpawnRequest
	err := json.Unmarshal(job.Data(), &req)
	signed := req // as the lead signed it: check tidies the role
	if err != nil || req.check() != nil {
		if err == nil {
			err = req.check()
		}
		t.events.Emit(Event{Payload: failure(ClassInternal, "a spawn request on the work queue was dropped: ", err)})
		_ = job.Term()
		return false, false
	}
	if !hasLabels(h.opts.Labels, req.Labels) {
		// A live worker that offers the labels takes it once it has a
		// free place: a busy pool is no reason to fail the spawn. Nor is a
		// look at the heartbeats that failed (a node going away): it says
		// nothing of the workers, so the spawn waits on, to the tries' bound.
		if time.Now().After(req.Deadline) || job.Delivered() >= maxPlacementTries {
			offered, err := h.offeredAlive(ctx, req.Labels)
			if !offered && (err == nil || job.Delivered() >= maxPlacementTries) {
				h.unplaced(req)
				_ = job.Term()
				return false, false
			}
		}
		_ = job.Nak(placementRetry)
		return false, true
	}
	if h.unheld.Load() { // lost its heartbeat while waiting: not now
		_ = job.Nak(placementRetry)
		return false, true
	}
	if err := h.signedByLead(signed); err != nil {
		if errors.As(err, new(errUnsignedSpawn)) {
			h.refuse(req, err)
			_ = job.Term()
			return false, false
		}
		t.events.Emit(Event{Agent: req.Name, Payload: failure(ClassInternal, "check the spawn's signature: ", err)})
		_ = job.Nak(placementRetry)
		return false, true
	}
	claimed, err := h.claim(req)
	if err != nil {
		t.events.Emit(Event{Agent: req.Name, Payload: failure(ClassRegistry, "take the spawn: ", err)})
		_ = job.Nak(placementRetry)
		return false, true
	}
	if err := job.Ack(ctx); err != nil && claimed {
		// The registry's claim is what counts: taken again, it is refused.
		t.events.Emit(Event{Agent: req.Name, Payload: failure(ClassInternal, "work queue: ", err)})
	}
	if !claimed {
		return false, false // a request the lead no longer waits for (cancelled, respawned)
	}
	return h.run(req, release), false
}

// hasLabels reports whether a worker with have may take a request asking want.
func hasLabels(have, want []string) bool {
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}

// claim makes this worker the one that runs req's teammate, if the
// registry still waits for this very request.
func (h *hosting) claim(req SpawnRequest) (bool, error) {
	t := h.t
	var claimed bool
	// The teammate's entry alone: a claim decides on nothing else, and as a
	// whole-registry update it raced every spawn for the team's entry.
	err := changeTeammate(t.reg, req.Name, func(m *Member) error {
		claimed = false
		if m.SpawnID != req.ID || m.Status != StatusQueued || m.Worker != "" {
			return errNoChange
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

// unplaced fails a request no worker could take in time, and tells whoever asked.
func (h *hosting) unplaced(req SpawnRequest) {
	t := h.t
	why := fmt.Sprintf("no worker with the labels %s took it within its placement time", strings.Join(req.Labels, ", "))
	var failed bool
	err := changeRegistry(t.reg, func(c *Config) error {
		failed = false
		i := c.Find(req.Name)
		if i < 0 || c.Teammates[i].SpawnID != req.ID || c.Teammates[i].Status != StatusQueued || c.Teammates[i].Worker != "" {
			return errNoChange
		}
		m := &c.Teammates[i]
		m.Status, m.Error, m.UpdatedAt = StatusFailed, why, time.Now().UTC()
		failed = true
		return nil
	})
	if err != nil || !failed {
		return
	}
	t.events.Emit(Event{Agent: req.Name, Payload: StatusChanged{Role: req.Role, Status: StatusFailed, Reason: why, PID: t.pid}})
	if _, err := t.messenger.deliver(req.Name, req.From, inbox.TypeError, teammateFailedText(req.Name, fmt.Errorf("%s", why))); err != nil {
		t.events.Emit(Event{Agent: req.Name, Payload: failure(ClassInbox, "could not tell "+req.From+": ", err)})
	}
}

// run starts the teammate req names in this process; the pool's place
// is its first cycle's. It reports whether the teammate started.
func (h *hosting) run(req SpawnRequest, release func()) bool {
	t, r := h.t, h.t.roster
	failed := func(class ErrorClass, err error) bool {
		r.markFailed(req.Name, err)
		t.events.Emit(Event{Agent: req.Name, Payload: failure(class, "", err)})
		if _, derr := t.messenger.deliver(req.Name, workspace.LeadName, inbox.TypeError, teammateFailedText(req.Name, err)); derr != nil {
			t.events.Emit(Event{Agent: req.Name, Payload: failure(ClassInbox, "could not tell the lead: ", derr)})
		}
		return false
	}
	choice, err := t.resolveModel(req.Provider, req.Model, req.Role)
	if err != nil {
		return failed(ClassModel, fmt.Errorf("worker %s cannot run %s: %w", h.opts.ID, req.Name, err))
	}
	var entry Member
	iso := req.Isolation
	if iso == "" || !h.isLead && t.opts.Isolation == IsolationWorktree {
		// The request says the lead's choice (an older lead's says none);
		// a worker whose person asked for worktrees keeps its clone's
		// checkout out of reach whatever the lead says: the stricter wins.
		iso = t.isolationOf("")
	}
	where, err := t.placeFrom(context.Background(), req.Name, iso, &entry, worktree.Start{Base: req.Base, Fresh: !req.Resume})
	if err != nil {
		return failed(ClassInternal, fmt.Errorf("worker %s cannot place %s: %w", h.opts.ID, req.Name, err))
	}
	if where.Root != "" {
		t.worktrees.Record(req.Name, func(e *Member) {
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
		archiveSession(t.ws.SessionPath(req.Name), time.Now().UTC())
	}
	mctx, cancel := context.WithCancel(t.root)
	var used Usage
	if req.Resume {
		// It goes on: its usage so far and its plan's approval stay.
		if c, err := t.reg.Read(); err == nil {
			if i := c.Find(req.Name); i >= 0 {
				used = c.Teammates[i].Usage()
			}
		}
	}
	m := &member{name: req.Name, role: req.Role, cancel: cancel, done: make(chan struct{}), status: StatusQueued,
		planMode: req.PlanMode, root: where.Root, model: t.newAgentModel(choice, used), claim: req.ID, request: req}
	m.planFromRegistry = func() bool { return t.plans.approvedElsewhere(m) }
	t.perms.Follow(req.Name, req.Asks, req.AskTimeout, req.Mode)
	if !h.isLead { // the lead's own process has its rules already
		t.perms.FollowDeny(req.Name, req.Deny)
	}
	agent, err := r.newTeammateAgent(m, "startup")
	if err != nil {
		cancel()
		return failed(ClassSession, err)
	}
	m.agent = agent
	r.mu.Lock()
	r.members[req.Name] = m
	r.mu.Unlock()
	t.events.Emit(Event{Agent: req.Name, Payload: StatusChanged{Role: req.Role, Status: StatusQueued,
		Reason: fmt.Sprintf("taken by worker %s on %s", h.opts.ID, h.opts.Host), PID: t.pid}})
	t.wg.Add(1)
	go r.runTeammate(mctx, m, func(context.Context) (func(), error) { return release, nil })
	return true
}

// spawnQueued is spawn on a team with a work queue: the teammate is
// registered queued, its prompt delivered, and the request published for
// whichever worker may take it.
func (r *roster) spawnQueued(ctx context.Context, from string, spec tools.SpawnSpec, role string, choice ModelChoice) error {
	t, h := r.t, r.t.hosting
	name := spec.Name
	labels := normalLabels(spec.Labels)
	if len(labels) == 0 {
		labels = normalLabels(t.opts.RoleLabels[role])
	}
	for _, l := range labels {
		if err := tools.CheckLabel(l); err != nil {
			return err
		}
	}
	// The lead's default travels with the spawn: a lead started with
	// --isolation worktree expects its teammates in worktrees wherever they
	// run, not in a worker's checkout because the model did not say.
	iso := t.isolationOf(spec.Isolation)
	id := spawnRequestID(ctx, name)
	now := time.Now().UTC()
	entry := Member{Name: name, Role: role, Status: StatusQueued, CreatedAt: now, UpdatedAt: now, PID: t.pid,
		PlanMode: spec.PlanMode, ModelRef: modelRefOf(choice), Labels: labels, SpawnID: id}
	if spec.PlanMode {
		entry.PlanState = PlanDrafting
	}
	err := changeRegistry(t.reg, func(c *Config) error {
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
	if err := t.archiveTeammateSession(name, now); err != nil {
		r.markFailed(name, err)
		return err
	}
	t.events.Emit(Event{Agent: name, Payload: Spawn{Role: role, Status: StatusQueued, From: from, PID: t.pid, Model: choice.Label()}})
	prompt, err := t.messenger.deliver(from, name, inbox.TypeMessage, spec.Prompt)
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
	push := iso == IsolationWorktree || t.worktrees.Shares() && h.worktreeOffered(ctx, labels)
	base, berr := t.worktrees.ShareBase(ctx, name, push)
	if berr != nil && base != "" && !errors.Is(berr, gitwt.ErrNoRemote) {
		t.events.Emit(Event{Agent: name, Payload: failure(ClassInternal, "", berr)})
	}
	err = h.publish(ctx, withRules(t.perms, SpawnRequest{ID: id, Name: name, Role: role, From: from, PromptID: prompt.ID,
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
func (h *hosting) liveElsewhere(m Member) bool {
	if !m.Status.Live() {
		return false
	}
	if m.Worker == "" {
		return m.Status == StatusQueued && m.PID == h.t.pid // waits for a worker
	}
	return h.workerAlive(m.Worker)
}

// offeredAlive reports whether a worker whose heartbeat lives offers every
// label of want. The heartbeats are read again at most once a Beat; without
// heartbeats none is taken to offer them; when they cannot be read, the
// error says so (and nothing is known).
func (h *hosting) offeredAlive(ctx context.Context, want []string) (bool, error) {
	if h.beats == nil {
		return false, nil
	}
	offers, err := h.aliveOffers(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range offers {
		if hasLabels(w.Labels, want) {
			return true, nil
		}
	}
	return false, nil
}

// worktreeOffered reports whether a spawn asking want may land on a
// worker, other than the lead's process, that runs its teammates in
// worktrees: that worker starts one from the lead's commit, which must
// then be on the team's remote. Heartbeats that cannot be read say yes.
func (h *hosting) worktreeOffered(ctx context.Context, want []string) bool {
	if h.beats == nil {
		return false
	}
	offers, err := h.aliveOffers(ctx)
	if err != nil {
		return true
	}
	for _, w := range offers {
		if !w.Lead && w.Isolation == IsolationWorktree && hasLabels(w.Labels, want) {
			return true
		}
	}
	return false
}

// aliveOffers is what each worker alive says of itself (this one
// included), its heartbeats read again at most once a Beat.
func (h *hosting) aliveOffers(ctx context.Context) ([]WorkerInfo, error) {
	h.mu.Lock()
	offers, fresh := h.offers, time.Since(h.offersAt) < h.opts.Beat
	h.mu.Unlock()
	if fresh {
		return offers, nil
	}
	alive, err := h.beats.Alive(ctx)
	if err != nil {
		return nil, err
	}
	offers = []WorkerInfo{h.self}
	for id, info := range alive {
		var w WorkerInfo
		if id != h.opts.ID && json.Unmarshal(info, &w) == nil {
			offers = append(offers, w)
		}
	}
	h.mu.Lock()
	h.offers, h.offersAt = offers, time.Now()
	h.mu.Unlock()
	return offers, nil
}

// workerAlive reports whether the worker id was heard of at the last look
// (any worker is, before the first look or without heartbeats).
func (h *hosting) workerAlive(id string) bool {
	if id == h.opts.ID {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.alive == nil || h.alive[id]
}

// hold takes this worker's heartbeat, trying again every Beat while it
// cannot (the server unreachable, or this id's last heartbeat not yet
// expired), until ctx ends (nil).
func (h *hosting) hold(ctx context.Context) Heartbeat {
	t := h.t
	for said := false; ; said = true {
		beat, err := h.beats.Hold(ctx, h.opts.ID, h.info)
		if err == nil {
			return beat
		}
		if ctx.Err() != nil {
			return nil
		}
		if !said { // once per outage
			t.events.Emit(Event{Payload: failure(ClassInternal, "", err)})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(h.opts.Beat):
		}
	}
}

// beatLoop keeps this worker's heartbeat until ctx ends, then releases it
// (a worker that stops says so at once). A heartbeat lost fences this
// worker: it stops its teammates at once, without a word to the store —
// it cannot prove it still runs them, and the lead respawns them
// elsewhere once the heartbeat expires — then takes a new heartbeat.
func (h *hosting) beatLoop(ctx context.Context, beat Heartbeat) {
	for beat != nil {
		select {
		case <-ctx.Done():
			gone, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = beat.Release(gone)
			cancel()
			return
		case <-beat.Lost():
			h.unheld.Store(true)
			var fenced []*member
			if !h.isLead {
				// Only the lead's process respawns, never its own
				// teammates: only a worker's need fencing.
				fenced = h.fence(beat.Err())
			}
			beat = h.hold(ctx)
			h.unheld.Store(false)
			if beat != nil {
				h.giveBack(ctx, fenced)
			}
		}
	}
}

// fence stops every teammate this worker runs, as no longer its own, and
// returns them.
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
		var d Member
		var req SpawnRequest
		err := changeRegistry(t.reg, func(c *Config) error {
			d = Member{} // a change tried again decides afresh
			i := c.Find(fm.name)
			if i < 0 {
				return errNoChange
			}
			m := &c.Teammates[i]
			if m.SpawnID != fm.claim || m.Worker != h.opts.ID || m.Ended ||
				m.Status != StatusQueued && m.Status != StatusWorking && m.Status != StatusIdle {
				return errNoChange // respawned already, or it ended
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
			t.events.Emit(Event{Agent: fm.name, Payload: failure(ClassRegistry, "give back after a lost heartbeat: ", err)})
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
			if !h.run(req, release) {
				release()
			}
		}()
	}
	if len(fenced) > 0 {
		t.notifyChanged()
	}
}

// requeue changes a dead teammate's entry m: queued for request id when
// it is respawned, failed otherwise.
func (h *hosting) requeue(m *Member, id, why string, respawn bool, now time.Time) {
	m.Activity, m.UpdatedAt = "", now
	if !respawn {
		m.Status, m.Error = StatusFailed, why
		return
	}
	m.Status, m.Error, m.Worker, m.Host, m.PID, m.SpawnID = StatusQueued, why+"; respawned", "", "", h.t.pid, id
}

// watchWorkers follows, in the lead's process, the workers' heartbeats:
// once the present ones are known and on every heartbeat gone, the
// teammates of workers without one are marked failed and respawned
// (reapDead); again every Beat, for claims made since.
func (h *hosting) watchWorkers(ctx context.Context) {
	tick := time.NewTicker(h.opts.Beat)
	defer tick.Stop()
	for ctx.Err() == nil {
		changes, current, err := h.beats.Watch(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
			continue
		}
		seen := map[string]bool{}
		known := false
		publish := func(reap bool) {
			alive := make(map[string]bool, len(seen))
			for id := range seen {
				alive[id] = true
			}
			h.mu.Lock()
			h.alive = alive
			h.mu.Unlock()
			if reap {
				h.reapDead(alive)
			}
		}
		for open := true; open; {
			select {
			case c, ok := <-changes:
				if !ok {
					open = false
					break
				}
				if c.Gone {
					delete(seen, c.ID)
				} else {
					seen[c.ID] = true
				}
				if known {
					publish(c.Gone)
				}
			case <-current:
				current, known = nil, true
				publish(true)
			case <-tick.C:
				if known {
					publish(true)
				}
			}
		}
	}
}

// reapDead marks failed, in the lead's process, the teammates of workers
// whose heartbeat is gone, and tells the lead. With the teammates'
// conversations in the team's session store, each is then respawned: a
// request to resume it goes on the queue, and whichever worker takes it
// goes on from its conversation, its inbox's read position keeping every
// message delivered once. The registry goes from the dead worker's status
// to queued in one change, so the team never looks settled in between.
func (h *hosting) reapDead(alive map[string]bool) {
	t := h.t
	respawn := t.opts.Sessions != nil
	var dead []Member
	var requests []SpawnRequest
	now := time.Now().UTC()
	_ = changeRegistry(t.reg, func(c *Config) error {
		dead, requests = dead[:0], requests[:0]
		for i := range c.Teammates {
			m := &c.Teammates[i]
			if m.Worker == "" || m.Worker == h.opts.ID || alive[m.Worker] || m.Ended {
				continue
			}
			if m.Status != StatusQueued && m.Status != StatusWorking && m.Status != StatusIdle {
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
			requests = append(requests, withRules(t.perms, SpawnRequest{ID: id, Name: m.Name, Role: m.Role, From: workspace.LeadName,
				Provider: m.Provider, Model: m.ModelName, PlanMode: m.PlanMode, Isolation: m.Isolation, Labels: m.Labels, Base: base,
				Deadline: now.Add(h.opts.Placement), Resume: true}))
			h.requeue(m, id, why, respawn, now)
		}
		if len(dead) == 0 {
			return errNoChange
		}
		return nil
	})
	for i, d := range dead {
		h.announceRespawn(d, requests[i], fmt.Errorf("its worker %s on %s stopped (no heartbeat)", d.Worker, d.Host), respawn)
	}
	if len(dead) > 0 {
		t.notifyChanged()
	}
}

// announceRespawn, after its entry was requeued, logs that teammate d
// failed for err, tells the lead, and, when it is respawned, publishes req.
func (h *hosting) announceRespawn(d Member, req SpawnRequest, err error, respawn bool) {
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
func (h *hosting) tellRespawn(d Member, err error, respawn bool, where string) {
	t := h.t
	t.events.Emit(Event{Agent: d.Name, Payload: StatusChanged{Role: d.Role, Status: StatusFailed, Reason: err.Error(), PID: t.pid}})
	text := teammateFailedText(d.Name, err)
	if respawn {
		text += " It is respawned " + where + " and goes on from its conversation."
	}
	if _, derr := t.messenger.deliver(d.Name, workspace.LeadName, inbox.TypeError, text); derr != nil {
		t.events.Emit(Event{Agent: d.Name, Payload: failure(ClassInbox, "could not tell the lead: ", derr)})
	}
	if respawn {
		t.events.Emit(Event{Agent: d.Name, Payload: StatusChanged{Role: d.Role, Status: StatusQueued, Reason: "respawned: " + err.Error(), PID: t.pid}})
	}
}

// remote is the registry's entry of a teammate another process runs (or
// that waits for a worker), on a team with a work queue.
func (t *Team) remote(name string) (Member, bool) {
	if t.hosting == nil || t.roster.runs(name) {
		return Member{}, false
	}
	c, err := t.reg.Read()
	if err != nil {
		return Member{}, false
	}
	i := c.Find(name)
	if i < 0 {
		return Member{}, false
	}
	return c.Teammates[i], true
}

// remoteSettled reports, in the lead's process, whether no teammate run
// elsewhere is queued or working or has unread messages. The statuses are
// looked at first, all of them: an inbox is asked (a request to the store
// each) only once none works, not for every idle teammate at every look.
func (h *hosting) remoteSettled() bool {
	t := h.t
	c, err := t.reg.Read()
	if err != nil {
		return false
	}
	var idle []string
	for _, m := range c.Teammates {
		if t.roster.runs(m.Name) {
			continue
		}
		switch m.Status {
		case StatusQueued, StatusWorking:
			return false
		case StatusIdle:
			idle = append(idle, m.Name)
		}
	}
	for _, name := range idle {
		if t.inboxes.hasUnread(name) {
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
			h.t.events.Emit(Event{Agent: workspace.LeadName, Payload: failure(ClassInbox, "take the shutdown answers: ", err)})
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
	c, err := t.reg.Read()
	if err != nil {
		t.events.Emit(Event{Payload: failure(ClassRegistry, "shut down the teammates on workers: ", err)})
		return nil
	}
	var ask []Member
	for _, m := range c.Teammates {
		if t.roster.runs(m.Name) || m.Ended {
			continue
		}
		if !m.Status.Live() {
			continue
		}
		if m.Status == StatusQueued && m.Worker == "" {
			h.cancelQueued(m, reason)
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
			if _, err := t.shutdowns.requestRemote(workspace.LeadName, m, reason); err != nil {
				t.events.Emit(Event{Agent: m.Name, Payload: failure(ClassInbox, "shutdown request: ", err)})
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
	answers := t.store.Watch(ctx, workspace.LeadName)
	tick := time.NewTicker(min(t.opts.PollInterval, remoteStopsPoll))
	defer tick.Stop()
	for {
		c, err := t.reg.Read()
		if err == nil {
			left := waitFor[:0:0]
			for _, name := range waitFor {
				if i := c.Find(name); i >= 0 && (c.Teammates[i].Status == StatusShutdown || c.Teammates[i].Status == StatusFailed) {
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
				t.events.Emit(Event{Agent: name, Payload: failure(ClassInternal, "",
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
func (h *hosting) cancelQueued(m Member, reason string) {
	t := h.t
	var done bool
	err := changeRegistry(t.reg, func(c *Config) error {
		done = false
		i := c.Find(m.Name)
		if i < 0 || c.Teammates[i].Status != StatusQueued || c.Teammates[i].Worker != "" {
			return errNoChange
		}
		e := &c.Teammates[i]
		e.Status, e.Ended, e.UpdatedAt = StatusShutdown, true, time.Now().UTC()
		done = true
		return nil
	})
	if err == nil && done {
		t.events.Emit(Event{Agent: m.Name, Payload: StatusChanged{Role: m.Role, Status: StatusShutdown, Reason: reason + " (before a worker took it)", PID: t.pid}})
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
	t.StopWorker("its worker " + t.hosting.opts.ID + " stopped")
	return nil
}

// WorkerID is this process's id as a worker ("" without a work queue).
func (t *Team) WorkerID() string {
	if t.hosting == nil {
		return ""
	}
	return t.hosting.opts.ID
}

// StopWorker stops every teammate this worker runs: each ends shut down
// (its conversation and inbox intact), never left working, and the lead
// hears of each that was not shut down already.
func (t *Team) StopWorker(reason string) {
	var live []string
	t.roster.mu.Lock()
	for _, m := range t.roster.members {
		if m.status.Live() && !m.fenced.Load() {
			live = append(live, m.name)
		}
	}
	t.roster.mu.Unlock()
	t.roster.stopAll(func(m *Member) {
		if m.Status.Live() {
			m.Status, m.Activity, m.Error = StatusShutdown, "", reason
		}
	}, reason)
	t.reg.Flush()
	for _, name := range live {
		if _, err := t.messenger.deliver(name, workspace.LeadName, inbox.TypeError,
			fmt.Sprintf("%s was shut down: %s. Spawn it again to go on.", name, reason)); err != nil {
			t.events.Emit(Event{Agent: name, Payload: failure(ClassInbox, "could not tell the lead: ", err)})
		}
	}
}
