package team

import (
	"context"
	"sync"
)

// stopper ends the team's goroutines without the team keeping a context:
// it is stopped once (by Close, a full disk, or the end of the context
// given to Open), and then cancels every context it handed out.
type stopper struct {
	mu      sync.Mutex
	done    chan struct{} // closed by stop
	next    int
	cancels map[int]context.CancelFunc
}

func newStopper() *stopper {
	return &stopper{done: make(chan struct{}), cancels: map[int]context.CancelFunc{}}
}

// stopped reports whether the team is stopping.
func (s *stopper) stopped() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// context is a context for a goroutine of the team: it ends when cancel is
// called or the team stops, whichever comes first (at once if it has).
// It carries no values: a goroutine of the team outlives the call that
// started it.
func (s *stopper) context() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancels == nil { // stopped
		cancel()
		return ctx, cancel
	}
	id := s.next
	s.next++
	s.cancels[id] = cancel
	return ctx, func() {
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
		cancel()
	}
}

// stop ends every context handed out. It returns once they are all
// cancelled, also to a second caller while the first is still at it.
func (s *stopper) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancels == nil {
		return
	}
	close(s.done)
	for _, cancel := range s.cancels {
		cancel()
	}
	s.cancels = nil
}
