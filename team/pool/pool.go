// Package pool bounds how many of a team's agents run a model turn at
// once, with a bounded queue of spawns waiting for a worker.
package pool

import (
	"context"
	"fmt"
	"sync"
)

// Pool bounds how many teammates run model turns at once. It does not bound
// how many teammates exist: idle ones hold no worker.
type Pool struct {
	workers  chan struct{}
	maxQueue int

	mu      sync.Mutex
	waiting int
	busy    int
}

// ErrQueueFull is returned when a spawn would exceed the queue bound.
var ErrQueueFull = fmt.Errorf("the spawn queue is full")

// New makes a pool of n workers (at least 1) with room for maxQueue
// spawns waiting for one.
func New(n, maxQueue int) *Pool {
	if n < 1 {
		n = 1
	}
	if maxQueue < 0 {
		maxQueue = 0
	}
	return &Pool{workers: make(chan struct{}, n), maxQueue: maxQueue}
}

// Size is the number of workers.
func (p *Pool) Size() int { return cap(p.workers) }

// Stats reports how many workers are busy and how many callers wait.
func (p *Pool) Stats() (busy, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy, p.waiting
}

// Ticket is a place in the queue, taken by a spawn before it registers.
type Ticket struct {
	p    *Pool
	used bool
}

// Enqueue takes a place in the queue, or refuses if maxQueue callers
// already wait and no worker is free.
func (p *Pool) Enqueue() (*Ticket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free := cap(p.workers) - p.busy
	if p.waiting-free >= p.maxQueue {
		return nil, fmt.Errorf("%w: %d spawns already wait for one of %d workers (--max-queue %d)",
			ErrQueueFull, p.waiting, cap(p.workers), p.maxQueue)
	}
	p.waiting++
	return &Ticket{p: p}, nil
}

// Acquire waits for a worker using an already-taken place in the queue.
func (t *Ticket) Acquire(ctx context.Context) (release func(), err error) {
	if t.used {
		return nil, fmt.Errorf("pool ticket used twice")
	}
	t.used = true
	return t.p.wait(ctx)
}

// Cancel gives the place back without taking a worker.
func (t *Ticket) Cancel() {
	if t.used {
		return
	}
	t.used = true
	t.p.mu.Lock()
	t.p.waiting--
	t.p.mu.Unlock()
}

// Acquire waits for a worker. Wakes of existing teammates always queue: their
// messages are on disk, so the queue bound applies only to new spawns.
func (p *Pool) Acquire(ctx context.Context) (release func(), err error) {
	p.mu.Lock()
	p.waiting++
	p.mu.Unlock()
	return p.wait(ctx)
}

// TryAcquire takes a free worker without waiting, or reports that none is free.
func (p *Pool) TryAcquire() (release func(), ok bool) {
	select {
	case p.workers <- struct{}{}:
	default:
		return nil, false
	}
	p.mu.Lock()
	p.busy++
	p.mu.Unlock()
	return p.releaser(), true
}

func (p *Pool) wait(ctx context.Context) (func(), error) {
	select {
	case p.workers <- struct{}{}:
	case <-ctx.Done():
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
		return nil, ctx.Err()
	}
	p.mu.Lock()
	p.waiting--
	p.busy++
	p.mu.Unlock()
	return p.releaser(), nil
}

// releaser gives a worker back, once however often it is called.
func (p *Pool) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.busy--
			p.mu.Unlock()
			<-p.workers
		})
	}
}
