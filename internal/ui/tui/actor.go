package tui

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// actor runs the model's jobs (file IO, team calls) one at a time, in the
// order Update asked for them, off the Update goroutine. Enqueueing never blocks.
type actor struct {
	mu   sync.Mutex
	jobs []func() tea.Msg
	wake chan struct{}
}

func newActor() *actor { return &actor{wake: make(chan struct{}, 1)} }

// do queues a job; its result, if not nil, is sent to the program.
func (a *actor) do(job func() tea.Msg) {
	a.mu.Lock()
	a.jobs = append(a.jobs, job)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run works through the queue until ctx ends; jobs left then are dropped.
func (a *actor) run(ctx context.Context, send func(tea.Msg)) {
	for {
		a.mu.Lock()
		jobs := a.jobs
		a.jobs = nil
		a.mu.Unlock()
		for _, job := range jobs {
			if ctx.Err() != nil {
				return
			}
			if msg := job(); msg != nil {
				send(msg)
			}
		}
		if len(jobs) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
	}
}
