package natsstore

import (
	"sync/atomic"
	"time"
)

// CountWatchTimers makes Watch's timers counted in n until the returned
// func restores time.AfterFunc. Not for parallel tests.
func CountWatchTimers(n *atomic.Int64) (restore func()) {
	afterFunc = func(d time.Duration, f func()) *time.Timer {
		n.Add(1)
		return time.AfterFunc(d, f)
	}
	return func() { afterFunc = time.AfterFunc }
}

// SetOwnerTTL makes o's lease live ttl instead of OwnerTTL.
func SetOwnerTTL(o *Owner, ttl time.Duration) { o.ttl = ttl }
