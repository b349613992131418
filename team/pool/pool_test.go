package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

func TestPoolBoundsConcurrencyAndReachesIt(t *testing.T) {
	p := New(4, 50)
	var mu sync.Mutex
	cur, peak := 0, 0
	gate := make(chan struct{})
	var wg sync.WaitGroup
	entered := make(chan struct{}, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := p.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			cur++
			if cur > peak {
				peak = cur
			}
			mu.Unlock()
			entered <- struct{}{}
			<-gate
			mu.Lock()
			cur--
			mu.Unlock()
			release()
		}()
	}
	for i := 0; i < 4; i++ {
		<-entered
	}
	// The other 8 are blocked in Acquire; wait until all have queued.
	testkit.EventuallyF(t, 10*time.Second, "4 busy and 8 waiting", func() bool {
		busy, waiting := p.Stats()
		if busy > 4 {
			t.Fatalf("busy %d waiting %d, want 4 and 8", busy, waiting)
		}
		return busy == 4 && waiting == 8
	}, func() string { busy, waiting := p.Stats(); return fmt.Sprintf("busy %d waiting %d", busy, waiting) })
	close(gate)
	wg.Wait()
	if peak != 4 {
		t.Fatalf("peak concurrency %d, want exactly 4", peak)
	}
}

func TestPoolQueueBoundRefusesSpawns(t *testing.T) {
	p := New(1, 2)
	release, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var tickets []*Ticket
	for i := 0; i < 2; i++ {
		tk, err := p.Enqueue()
		if err != nil {
			t.Fatalf("spawn %d refused: %v", i, err)
		}
		tickets = append(tickets, tk)
	}
	if _, err := p.Enqueue(); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third queued spawn: err %v, want ErrQueueFull", err)
	}
	tickets[0].Cancel()
	tk, err := p.Enqueue()
	if err != nil {
		t.Fatalf("after a cancel a place should be free: %v", err)
	}
	tk.Cancel()
	tickets[1].Cancel()
	release()
	if busy, waiting := p.Stats(); busy != 0 || waiting != 0 {
		t.Fatalf("busy %d waiting %d after all released", busy, waiting)
	}
}

func TestPoolAcquireHonoursCancel(t *testing.T) {
	p := New(1, 0)
	release, _ := p.Acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Acquire(ctx)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	release()
	if _, waiting := p.Stats(); waiting != 0 {
		t.Fatalf("a cancelled waiter is still counted")
	}
}
