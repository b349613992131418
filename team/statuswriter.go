package team

import (
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// writeLater reports whether a status change may join a later registry
// write instead of waiting for its own: only a shutdown of a teammate whose
// goroutine has ended while another teammate of this process is still
// live, which is how stopAll shuts the team down one by one. The last of
// them then waits, and so every earlier one is on disk when it returns.
// Other changes wait: spawns must see the names taken, and what a status
// event says must already be in the registry for other processes.
// The caller holds r.mu.
func (r *roster) writeLater(m *member, status registry.Status) bool {
	if status != registry.StatusShutdown {
		return false
	}
	select {
	case <-m.done:
	default:
		return false
	}
	for _, o := range r.members {
		if o != m && o.status.Live() {
			return true
		}
	}
	return false
}

// setStatusLater is setStatus for a change nobody has to wait for: it
// joins the next registry write, and the status event follows once it is
// on disk. Only a teammate's own goroutine may call it: Close waits for
// the write through t.wg, whose count that goroutine keeps above zero.
func (r *roster) setStatusLater(m *member, status registry.Status, why string, fn func(*registry.Member)) {
	t := r.t
	if m.fenced.Load() {
		return
	}
	r.mu.Lock()
	m.status = status
	r.mu.Unlock()
	t.wg.Add(1)
	t.reg.SetStatusLater(m.name, status, r.guarded(m, withUsage(m, fn)), func(err error) {
		defer t.wg.Done()
		r.statusWritten(m, status, why, err)
	})
}

// statusWritten reports a status change once the registry has it, so
// that a reader in another process who sees the event finds it there too.
func (r *roster) statusWritten(m *member, status registry.Status, why string, err error) {
	t := r.t
	if fencedError(err) {
		r.fenceOff(m, err)
		return
	}
	t.faults.CheckStorage(err)
	if err != nil && t.faults.Err() == nil { // a full disk is told once, by checkStorage
		t.events.Emit(event.Event{Agent: m.name, Payload: failure(event.ClassRegistry, "registry: ", err)})
	}
	t.events.Emit(event.Event{Agent: m.name, Payload: event.StatusChanged{Role: m.role, Status: status, Reason: why, PID: t.pid}})
	t.changed.notify()
}

// withUsage is fn that also records the teammate's usage so far: every
// status write carries it, so the registry's count is never far behind.
func withUsage(m *member, fn func(*registry.Member)) func(*registry.Member) {
	if m.model == nil {
		return fn
	}
	return func(mb *registry.Member) {
		mb.SetUsage(m.model.Usage())
		if fn != nil {
			fn(mb)
		}
	}
}
