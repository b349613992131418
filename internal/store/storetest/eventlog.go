package storetest

import (
	"sync"
	"testing"
)

// EventLogOpener opens instances of an event log; every call reaches the
// same log, as two processes on one workspace do.
type EventLogOpener struct {
	// Open returns a function that logs event number n through a new instance.
	Open func(t *testing.T) func(n int)
	// Read returns the number of every event logged, in the log's order;
	// a line that is not whole is an error.
	Read func(t *testing.T) ([]int, error)
}

// RunEventLog runs the event log contract against o.
func RunEventLog(t *testing.T, o EventLogOpener) {
	t.Run("ConcurrentAppendsAllPresentEachWhole", func(t *testing.T) { eventsWhole(t, o) })
}

// eventsWhole: 4 instances × 6 goroutines × 50 events; every event is in
// the log exactly once, and every line reads back whole.
func eventsWhole(t *testing.T, o EventLogOpener) {
	const instances, writers, each = 4, 6, 50
	var wg sync.WaitGroup
	for i := range instances {
		emit := o.Open(t)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range each {
					emit(1 + (i*writers+w)*each + k)
				}
			}()
		}
	}
	wg.Wait()
	got, err := o.Read(t)
	if err != nil {
		t.Fatalf("the log does not read back whole: %v", err)
	}
	seen := map[int]int{}
	for _, n := range got {
		seen[n]++
	}
	for n := 1; n <= instances*writers*each; n++ {
		if seen[n] != 1 {
			t.Errorf("event %d is in the log %d times, want once", n, seen[n])
		}
	}
	if len(got) != instances*writers*each {
		t.Fatalf("the log has %d events, want %d", len(got), instances*writers*each)
	}
}
