package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

func openQueue(t *testing.T, url, team string) *natsstore.Queue {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := natsstore.OpenQueue(context.Background(), nc, team)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Each request is taken by one of the workers sharing the queue, once; a
// request published again under its id is one request.
func TestQueueHandsEachRequestToOneWorker(t *testing.T) {
	url := startServer(t)
	pub := openQueue(t, url, "q1")
	ctx := context.Background()
	const n = 20
	for i := range n {
		id := fmt.Sprintf("spawn-%d", i)
		for range 2 { // a resent spawn
			if err := pub.Publish(ctx, id, []byte(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range 3 {
		w := openQueue(t, url, "q1")
		wg.Go(func() {
			for {
				job, err := w.Next(ctx)
				if err != nil {
					return
				}
				if err := job.Ack(ctx); err != nil {
					t.Error(err)
				}
				mu.Lock()
				taken[string(job.Data())]++
				done := len(taken) == n
				mu.Unlock()
				if done {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if len(taken) != n {
		t.Fatalf("took %d distinct requests, want %d", len(taken), n)
	}
	for id, c := range taken {
		if c != 1 {
			t.Errorf("%s taken %d times", id, c)
		}
	}
	// Nothing is left: a further wait ends with the context, not a request.
	short, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer stop()
	if job, err := pub.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queue after all were acknowledged: job %v, err %v", job, err)
	}
}

// A request given back (a worker without the labels it asks for) is
// offered again, and its delivery count says how often.
func TestQueueOffersAGivenBackRequestAgain(t *testing.T) {
	url := startServer(t)
	q := openQueue(t, url, "q2")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := q.Publish(ctx, "a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	job, err := q.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if job.Delivered() != 1 {
		t.Fatalf("first delivery counted %d", job.Delivered())
	}
	if err := job.Nak(0); err != nil {
		t.Fatal(err)
	}
	again, err := openQueue(t, url, "q2").Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Data()) != "a" || again.Delivered() != 2 {
		t.Fatalf("offered again %q, delivered %d; want a, 2", again.Data(), again.Delivered())
	}
	if err := again.Term(); err != nil {
		t.Fatal(err)
	}
}

func TestQueueRefusesAHostileTeamName(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := natsstore.OpenQueue(context.Background(), nc, "a.>"); err == nil {
		t.Fatal("a team name with a wildcard opened a queue")
	}
}

// A worker's heartbeat (a lease) is listed while it beats, held by one
// process at a time, and gone at once when released; a worker cut off
// from the server loses its lease within WorkerFence and is gone from the
// list within about WorkerTTL.
func TestWorkersHeartbeats(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cut, err := nats.Connect(url) // two's connection, closed to cut it off
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	ctx := context.Background()
	w, err := natsstore.OpenWorkers(ctx, nc, "w1")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := natsstore.OpenWorkers(ctx, cut, "w1")
	if err != nil {
		t.Fatal(err)
	}
	one, err := w.Hold(ctx, "one", []byte("host-one"))
	if err != nil {
		t.Fatal(err)
	}
	two, err := w2.Hold(ctx, "two", []byte("host-two"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = two.Release(ctx) }()
	alive, err := w.Alive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alive) != 2 || string(alive["one"]) != "host-one" {
		t.Fatalf("alive = %q, want one and two", alive)
	}
	if _, err := w.Hold(ctx, "one", nil); !errors.Is(err, natsstore.ErrHeld) {
		t.Fatalf("a second holder of one: %v, want ErrHeld", err)
	}
	if err := one.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hold(ctx, "a.b", nil); err == nil {
		t.Fatal("a worker id with a dot was taken")
	}
	cutAt := time.Now()
	cut.Close()
	select {
	case <-two.Lost():
		if d := time.Since(cutAt); d > natsstore.WorkerFence+time.Second {
			t.Errorf("two knew itself cut off after %v, want within its fence %v", d, natsstore.WorkerFence)
		}
	case <-time.After(4 * natsstore.WorkerTTL):
		t.Fatal("two never knew itself cut off")
	}
	// two is gone within the TTL (polled with a bound).
	testkit.Eventually(t, 4*natsstore.WorkerTTL, "two gone from the workers after its last beat", func() bool {
		alive, err := w.Alive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := alive["one"]; ok {
			t.Fatalf("one is listed after it said it was gone: %q", alive)
		}
		return len(alive) == 0
	})
}
