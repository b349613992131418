package natsstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// lateAnswers is how late the server's answers come in the tests below:
// over the store's usual wait for one try (2 s), well under what a
// refresh of the owner lease has (its 10 s TTL less the 2.5 s between
// refreshes).
const lateAnswers = 4 * time.Second

// The lead's owner lease is kept while its process is too busy to read
// the server's answers in time (its CPU taken by its teammates' work: the
// answers come lateAnswers late, every one). A refresh tried again after
// its first try's answer was slow was refused (the server checks the
// expected revision before it drops a duplicate) and the lease taken for
// lost; now each try's answer is waited for as long as the refresh may
// take, and a refused try whose first was stored is the lease's own write.
func TestTheOwnerLeaseIsKeptWhileItsAnswersComeLate(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	proxy := startSlowProxy(t, strings.TrimPrefix(url, "nats://"))
	ls, _ := openLeases(t, proxy.url(), "late")
	release, lost, err := natsstore.NewOwner(ls, "late", "nats://late").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	proxy.setDelay(lateAnswers)
	select {
	case <-lost:
		t.Fatal("the owner lease was lost while its answers came late")
	case <-time.After(2*natsstore.OwnerTTL + lateAnswers):
	}
	direct, _ := openLeases(t, url, "late")
	if running, _, err := natsstore.NewOwner(direct, "late", "nats://late").Running(context.Background()); err != nil || !running {
		t.Fatalf("Running = %v, %v: the server does not see the lease held", running, err)
	}
}

// A claimed conversation's append whose answers come late is stored, and
// not refused as another writer's: each try given up after 2 s, none was
// ever answered (and a try sent again after a stored one is refused for
// the sequence); now the first answer counts, and a refused try whose
// first was stored is the log's own.
func TestASlowSessionAppendIsStored(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	proxy := startSlowProxy(t, strings.TrimPrefix(url, "nats://"))
	nc := connect(t, proxy.url(), natsconn.ConnectOptions{})
	s, err := natsstore.OpenSessions(context.Background(), nc, "lateappend")
	if err != nil {
		t.Fatal(err)
	}
	log := s.Log("alice")
	if err := log.Claim(t.Context()); err != nil {
		t.Fatal(err)
	}
	proxy.setDelay(lateAnswers)
	if err := log.AppendLines(t.Context(), [][]byte{[]byte(`{"role":"user","content":"one"}`)}); err != nil {
		t.Fatalf("a slow append: %v", err)
	}
	if err := log.AppendLines(t.Context(), [][]byte{[]byte(`{"role":"assistant","content":"two"}`)}); err != nil {
		t.Fatalf("the append after it: %v", err)
	}
	proxy.setDelay(0)
	lines, err := log.Lines(t.Context())
	if err != nil || len(lines) != 2 {
		t.Fatalf("the conversation: %q, %v", lines, err)
	}
}

// The owner lease renews on a connection of its own (RenewOn): while the
// team's shared connection is held up (its answers a minute late, as
// behind the traffic of hundreds of teammates), the lease is kept. On the
// shared connection it was lost.
func TestTheOwnerLeaseRenewsOnAConnectionOfItsOwn(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	proxy := startSlowProxy(t, strings.TrimPrefix(url, "nats://"))
	shared, _ := openLeases(t, proxy.url(), "own")
	dials := 0
	owner := natsstore.NewOwner(shared, "own", "nats://own").RenewOn(func(ctx context.Context) (*nats.Conn, error) {
		dials++
		return natsconn.Connect(ctx, url, natsconn.ConnectOptions{})
	})
	release, lost, err := owner.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	proxy.setDelay(time.Minute)
	select {
	case <-lost:
		t.Fatal("the owner lease was lost while the shared connection was held up")
	case <-time.After(natsstore.OwnerTTL + natsstore.OwnerTTL/2):
	}
	if dials != 1 {
		t.Fatalf("Acquire dialled %d connections, want 1", dials)
	}
}

// BenchmarkTheOwnerLeaseUnderABusyCPU measures how late the owner lease's
// refreshes get while its process's CPU is taken by goroutines that only
// compute and allocate (as hundreds of teammates' work would), the server
// in a process of its own: the longest wait from a confirmed refresh's
// sending to the next one's confirmation (the lease is lost at OwnerTTL),
// and whether it was lost, over two TTLs. Run with -benchtime=1x.
func BenchmarkTheOwnerLeaseUnderABusyCPU(b *testing.B) {
	for _, hogs := range []int{0, 100, 200, 300} {
		b.Run(fmt.Sprint(hogs, "hogs"), func(b *testing.B) {
			for range b.N {
				longest, lost := busyLease(b, hogs)
				b.ReportMetric(longest.Seconds(), "longest-wait-s")
				b.ReportMetric(lost, "lost")
			}
		})
	}
}

// busyLease holds an owner lease for two TTLs beside hogs busy goroutines.
func busyLease(b *testing.B, hogs int) (time.Duration, float64) {
	url := startServerProcess(b)
	nc := connect(b, url, natsconn.ConnectOptions{})
	ls, err := natsstore.OpenLeases(context.Background(), nc, "busy")
	if err != nil {
		b.Fatal(err)
	}
	l, err := ls.Acquire(context.Background(), "owner", []byte("lead"), natsstore.OwnerTTL)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sink atomic.Int64
	for range hogs {
		wg.Go(func() {
			x := 0
			for {
				select {
				case <-stop:
					sink.Add(int64(x))
					return
				default:
				}
				buf := make([]byte, 256)
				for i := range buf {
					x += int(buf[i]) + i
				}
			}
		})
	}
	lost := 0.0
	select {
	case <-l.Lost():
		lost = 1
	case <-time.After(2 * natsstore.OwnerTTL):
	}
	close(stop)
	wg.Wait()
	return l.LongestWait(), lost
}
