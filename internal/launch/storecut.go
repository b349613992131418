package launch

import (
	"context"
	"sync"
	"time"
)

// StoreGoneGrace is how long a run past its end (deadline, interrupt)
// waits for a NATS server out of reach before it stops waiting for it.
const StoreGoneGrace = 5 * time.Second

// CutWhenGone closes the NATS connection once ctx has ended and the server
// has been out of reach for grace: each store call to a server gone away
// waits its own bound (10 s), one after another, so a run's ending would
// last minutes past its --timeout; closed, they fail at once. A server
// that answers keeps the connection, so the ending's writes and the
// shutdown of teammates on workers go on. stop ends the watch.
func (s *Stores) CutWhenGone(ctx context.Context, grace time.Duration) (stop func()) {
	if s.Conn == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		tick := time.NewTicker(grace / 10)
		defer tick.Stop()
		var gone time.Time
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				switch {
				case s.Conn.IsConnected():
					gone = time.Time{}
				case gone.IsZero():
					gone = now
				case now.Sub(gone) >= grace:
					s.Conn.Close()
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
