package hosts

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/worktree"
)

// OfferedAlive reports whether a worker whose heartbeat lives offers every
// label of want. The heartbeats are read again at most once a Beat; without
// heartbeats none is taken to offer them; when they cannot be read, the
// error says so (and nothing is known).
func (h *Host) OfferedAlive(ctx context.Context, want []string) (bool, error) {
	if h.d.Beats == nil {
		return false, nil
	}
	offers, err := h.aliveOffers(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range offers {
		if HasLabels(w.Labels, want) {
			return true, nil
		}
	}
	return false, nil
}

// WorktreeOffered reports whether a spawn asking want may land on a
// worker, other than the lead's process, that runs its teammates in
// worktrees: that worker starts one from the lead's commit, which must
// then be on the team's remote. Heartbeats that cannot be read say yes.
func (h *Host) WorktreeOffered(ctx context.Context, want []string) bool {
	if h.d.Beats == nil {
		return false
	}
	offers, err := h.aliveOffers(ctx)
	if err != nil {
		return true
	}
	for _, w := range offers {
		if !w.Lead && w.Isolation == worktree.IsolationWorktree && HasLabels(w.Labels, want) {
			return true
		}
	}
	return false
}

// aliveOffers is what each worker alive says of itself (this one
// included), its heartbeats read again at most once a Beat.
func (h *Host) aliveOffers(ctx context.Context) ([]WorkerInfo, error) {
	h.mu.Lock()
	offers, fresh := h.offers, time.Since(h.offersAt) < h.opts.Beat
	h.mu.Unlock()
	if fresh {
		return offers, nil
	}
	alive, err := h.d.Beats.Alive(ctx)
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

// Alive reports whether the worker id was heard of at the last look (any
// worker is, before the first look or without heartbeats).
func (h *Host) Alive(id string) bool {
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
func (h *Host) hold(ctx context.Context) Heartbeat {
	for said := false; ; said = true {
		beat, err := h.d.Beats.Hold(ctx, h.opts.ID, h.info)
		if err == nil {
			return beat
		}
		if ctx.Err() != nil {
			return nil
		}
		if !said { // once per outage
			h.fail("", event.ClassInternal, "", err)
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
func (h *Host) beatLoop(ctx context.Context, beat Heartbeat) {
	for beat != nil {
		select {
		case <-ctx.Done():
			gone, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = beat.Release(gone)
			cancel()
			return
		case <-beat.Lost():
			h.unheld.Store(true)
			giveBack := func(context.Context) {}
			if !h.d.Lead {
				// Only the lead's process respawns, never its own
				// teammates: only a worker's need fencing.
				giveBack = h.d.Runner.Fence(beat.Err())
			}
			beat = h.hold(ctx)
			h.unheld.Store(false)
			if beat != nil {
				giveBack(ctx)
			}
		}
	}
}

// watchWorkers follows, in the lead's process, the workers' heartbeats:
// once the present ones are known and on every heartbeat gone, the
// teammates of workers without one are reaped (Runner.Reap); again every
// Beat, for claims made since.
func (h *Host) watchWorkers(ctx context.Context) {
	tick := time.NewTicker(h.opts.Beat)
	defer tick.Stop()
	for ctx.Err() == nil {
		changes, current, err := h.d.Beats.Watch(ctx)
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
				h.d.Runner.Reap(alive)
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
