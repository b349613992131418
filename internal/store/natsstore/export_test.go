package natsstore

import (
	"context"
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

// DriveWatchBackstops gives every Watch made until restore the backstop
// ticks sent on ticks, and sends on done whether each signalled.
func DriveWatchBackstops(ticks <-chan time.Time, done chan<- bool) (restore func()) {
	oldTicks, oldDone := backstopTicks, backstopDone
	backstopTicks = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
	backstopDone = func(s bool) { done <- s }
	return func() { backstopTicks, backstopDone = oldTicks, oldDone }
}

// WatchBackstops are the backstops signalled after news and the period of
// the full ones.
const WatchBackstops, WatchFullBackstops = watchNewsBackstops, watchFullBackstops

// PutAfter is Put of a batch whose earlier tries were sent under the batch
// ids tried (their answers lost).
func (e *Entries) PutAfter(ctx context.Context, tried []string, keys []string, data [][]byte, revs []uint64) (uint64, bool, error) {
	return e.put(ctx, tried, keys, data, revs)
}
