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

// PutAfter is Put of a batch whose earlier tries were sent under the batch
// ids tried (their answers lost).
func (e *Entries) PutAfter(tried []string, keys []string, data [][]byte, revs []uint64) (uint64, bool, error) {
	return e.put(tried, keys, data, revs)
}
