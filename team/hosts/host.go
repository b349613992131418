package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/worktree"
)

// Runner is what a worker does with the requests it takes: the team's side.
type Runner interface {
	// Verify checks that req was signed by the team's current lead: an
	// *UnsignedError when it was not, another error when that cannot be
	// known now (the request is offered again), nil when it was or the
	// store keeps no keys to check it by.
	Verify(ctx context.Context, req Request) error
	// Refuse fails the teammate that waits for req, for want of the lead's
	// signature, and says why.
	Refuse(req Request, why error)
	// Claim makes this worker the one that runs req's teammate, if the
	// registry still waits for this very request.
	Claim(req Request) (bool, error)
	// Run starts req's teammate here with the pool's place release (its
	// first cycle's); it reports whether the teammate started.
	Run(req Request, release func()) bool
	// Unplaced fails a request no worker could take in time.
	Unplaced(req Request)
	// Fence stops every teammate this worker runs, its heartbeat lost; the
	// func it returns gives them back once a heartbeat is held again.
	Fence(why error) (giveBack func(ctx context.Context))
	// Reap, in the lead's process, fails or respawns the teammates of the
	// workers not in alive.
	Reap(alive map[string]bool)
}

// UnsignedError is the refusal of a spawn request the team's current
// lead did not sign; its text follows "refused the spawn of NAME: ".
type UnsignedError struct{ Why string }

func (e *UnsignedError) Error() string {
	return e.Why + ", so it is not run (a forged request, or one of a lead that no longer runs the team)"
}

// Pool is the bounded places of the process's teammates (team/pool).
type Pool interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// Deps are what a worker needs of its team.
type Deps struct {
	Queue  SpawnQueue
	Beats  Heartbeats // nil: no heartbeats; every worker is taken for alive
	Runner Runner
	Pool   Pool
	Events event.Sink
	// Failure is the event payload of a step that err ended.
	Failure func(class event.ErrorClass, prefix string, err error) event.Failure
	PID     int
	// Lead: this is the lead's process, which watches the others.
	Lead bool
	// Worktrees: its person asked for worktrees, which its heartbeat says.
	Worktrees bool
}

// Host is this process as a worker of the team: it takes spawn requests
// from the queue, keeps its heartbeat, and, in the lead's process,
// watches the others'.
type Host struct {
	opts Options
	d    Deps
	info []byte     // what the heartbeat says of this worker
	self WorkerInfo // the same, unencoded

	mu    sync.Mutex
	alive map[string]bool // the workers heard of at the last look; nil before one

	// unheld is set while this worker holds no heartbeat (lost, not yet
	// taken again): it takes no spawn then, as the lead may take it for dead.
	unheld atomic.Bool
	// offers are what each worker alive at offersAt says of itself (this
	// one included), from their heartbeats: read again when a spawn would
	// fail for want of a worker (OfferedAlive) or may land on a worker in
	// worktrees (WorktreeOffered), at most once a Beat.
	offers   []WorkerInfo
	offersAt time.Time
}

// New is the worker o describes (its defaults filled in).
func New(o Options, d Deps) *Host {
	if o.Host == "" {
		o.Host, _ = os.Hostname()
		if o.Host == "" {
			o.Host = "localhost"
		}
	}
	if o.ID == "" {
		o.ID = WorkerID(o.Host, d.PID)
	}
	if o.Placement <= 0 {
		o.Placement = DefaultPlacement
	}
	if o.Beat <= 0 {
		o.Beat = 2 * time.Second
	}
	o.Labels = NormalLabels(o.Labels)
	self := WorkerInfo{Host: o.Host, PID: d.PID, Labels: o.Labels, Lead: d.Lead, Since: time.Now().UTC()}
	if d.Worktrees {
		self.Isolation = worktree.IsolationWorktree
	}
	info, _ := json.Marshal(self)
	return &Host{opts: o, d: d, info: info, self: self}
}

// Options are the worker's, its defaults filled in.
func (h *Host) Options() Options { return h.opts }

// Beats are the workers' heartbeats; nil without.
func (h *Host) Beats() Heartbeats { return h.d.Beats }

// Start runs the worker's goroutines, counted in wg, until ctx ends: the
// heartbeat first (a worker is alive before it takes anything), then the
// queue, and in the lead's process the watch of the others.
func (h *Host) Start(ctx context.Context, wg *sync.WaitGroup) {
	ctx, cancel := context.WithCancel(ctx)
	if h.d.Beats != nil {
		beat := h.hold(ctx)
		wg.Go(func() { h.beatLoop(ctx, beat) })
		if h.d.Lead {
			wg.Go(func() { h.watchWorkers(ctx) })
		}
	}
	wg.Go(func() {
		defer cancel()
		h.serve(ctx)
	})
}

func (h *Host) fail(agent string, class event.ErrorClass, prefix string, err error) {
	h.d.Events.Emit(event.Event{Agent: agent, Payload: h.d.Failure(class, prefix, err)})
}

// serve takes requests while the pool has a free place: at most
// MaxWorkers teammates of this process run a cycle at once.
func (h *Host) serve(ctx context.Context) {
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
		release, err := h.d.Pool.Acquire(ctx)
		if err != nil {
			return
		}
		job, err := h.d.Queue.Next(ctx)
		if err != nil {
			release()
			if ctx.Err() != nil {
				return
			}
			if !failing { // said once per outage
				h.fail("", event.ClassInternal, "work queue: ", err)
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
func (h *Host) take(ctx context.Context, job QueueJob, release func()) (taken, givenBack bool) {
	var req Request
	err := json.Unmarshal(job.Data(), &req)
	signed := req // as the lead signed it: Check tidies the role
	if err != nil || req.Check() != nil {
		if err == nil {
			err = req.Check()
		}
		h.fail("", event.ClassInternal, "a spawn request on the work queue was dropped: ", err)
		_ = job.Term()
		return false, false
	}
	if !HasLabels(h.opts.Labels, req.Labels) {
		// A live worker that offers the labels takes it once it has a
		// free place: a busy pool is no reason to fail the spawn. Nor is a
		// look at the heartbeats that failed (a node going away): it says
		// nothing of the workers, so the spawn waits on, to the tries' bound.
		if time.Now().After(req.Deadline) || job.Delivered() >= maxPlacementTries {
			offered, err := h.OfferedAlive(ctx, req.Labels)
			if !offered && (err == nil || job.Delivered() >= maxPlacementTries) {
				h.d.Runner.Unplaced(req)
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
	if err := h.d.Runner.Verify(ctx, signed); err != nil {
		if errors.As(err, new(*UnsignedError)) {
			h.d.Runner.Refuse(req, err)
			_ = job.Term()
			return false, false
		}
		h.fail(req.Name, event.ClassInternal, "check the spawn's signature: ", err)
		_ = job.Nak(placementRetry)
		return false, true
	}
	claimed, err := h.d.Runner.Claim(req)
	if err != nil {
		h.fail(req.Name, event.ClassRegistry, "take the spawn: ", err)
		_ = job.Nak(placementRetry)
		return false, true
	}
	if err := job.Ack(ctx); err != nil && claimed {
		// The registry's claim is what counts: taken again, it is refused.
		h.fail(req.Name, event.ClassInternal, "work queue: ", err)
	}
	if !claimed {
		return false, false // a request the lead no longer waits for (cancelled, respawned)
	}
	return h.d.Runner.Run(req, release), false
}
