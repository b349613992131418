package natsstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The test binary doubles as a lease holder: with envLeaseURL set, TestMain
// acquires the lease "owner" of team "kill" there, says "held" on stdout
// and waits to be killed.
const envLeaseURL = "NATSSTORE_TEST_LEASE_URL"

// With envServeDir set, it is instead a NATS server kept in that
// directory: it says its URL on stdout and serves until stdin closes.
const envServeDir = "NATSSTORE_TEST_SERVE_DIR"

func TestMain(m *testing.M) {
	if url := os.Getenv(envLeaseURL); url != "" {
		os.Exit(holdLease(url))
	}
	if dir := os.Getenv(envServeDir); dir != "" {
		os.Exit(serve(dir))
	}
	os.Exit(m.Run())
}

// serve is the helper process that runs a server until stdin closes.
func serve(dir string) int {
	s, err := natsserver.StartLocal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	fmt.Println(s.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}

// startServerProcess runs a server in a process of its own (one whose
// CPU the test's own work does not take) and returns its URL.
func startServerProcess(t testing.TB) string {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), envServeDir+"="+t.TempDir())
	child.Stderr = os.Stderr
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "nats://") {
		t.Fatalf("the server process said %q, %v", line, err)
	}
	return strings.TrimSpace(line)
}

// holdLease is the helper process: it holds the lease until killed.
func holdLease(url string) int {
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	ls, err := natsstore.OpenLeases(context.Background(), nc, "kill")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	l, err := ls.Acquire(context.Background(), "owner", []byte(fmt.Sprint("pid ", os.Getpid())), leaseTTL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Println("held")
	<-l.Lost()
	fmt.Fprintln(os.Stderr, "child: lost the lease:", l.Err())
	return 1
}

// leaseTTL is the tests' time to live: beats every 2/3 s.
const leaseTTL = 2 * time.Second

// clusterLeaseTTL is the TTL of a lease that must outlive a node's loss.
const clusterLeaseTTL = 5 * time.Second

// expiryBound is how long after its TTL an expired lease may take to be
// seen gone (the server checks expiries on a timer; a loaded machine).
const expiryBound = 5 * time.Second

func openLeases(t *testing.T, url, team string, opts ...natsstore.MailboxOption) (*natsstore.Leases, *nats.Conn) {
	t.Helper()
	nc := connect(t, url, natsconn.ConnectOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ls, err := natsstore.OpenLeases(ctx, nc, team, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ls, nc
}

func acquire(t *testing.T, ls *natsstore.Leases, key, value string) *natsstore.Lease {
	t.Helper()
	return acquireFor(t, ls, key, value, leaseTTL)
}

// acquireFor is acquire with a TTL of its own.
func acquireFor(t *testing.T, ls *natsstore.Leases, key, value string, ttl time.Duration) *natsstore.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := ls.Acquire(ctx, key, []byte(value), ttl)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// wantHeld checks an Acquire of key fails, naming holder.
func wantHeld(t *testing.T, ls *natsstore.Leases, key, holder string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := ls.Acquire(ctx, key, []byte("intruder"), leaseTTL)
	var held *natsstore.HeldError
	if !errors.As(err, &held) || !errors.Is(err, natsstore.ErrHeld) {
		if l != nil {
			_ = l.Release(ctx)
		}
		t.Fatalf("acquire of a held %s: err = %v, want it held by %q", key, err, holder)
	}
	if string(held.Value) != holder {
		t.Fatalf("held by %q, want %q", held.Value, holder)
	}
}

// waitGone waits for the watch to report key gone and returns when.
func waitGone(t *testing.T, ch <-chan natsstore.LeaseChange, key string, bound time.Duration) time.Time {
	t.Helper()
	timeout := time.After(bound)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("the watch ended")
			}
			if c.Key == key && c.Gone {
				return time.Now()
			}
		case <-timeout:
			t.Fatalf("%s not seen gone within %v", key, bound)
		}
	}
}

// An exclusive acquire fails while the lease is held, refreshed past
// several TTLs, and succeeds once it is released; the watcher sees the
// release as gone.
func TestLeaseIsExclusiveWhileHeldAndFreeAfterRelease(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	ls, _ := openLeases(t, url, "ex")
	other, _ := openLeases(t, url, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := other.Watch(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	a := acquire(t, ls, "owner", "host-a")
	wantHeld(t, other, "owner", "host-a")
	// Kept alive by its beats well past its TTL.
	for end := time.Now().Add(3 * leaseTTL); time.Now().Before(end); {
		select {
		case c := <-changes:
			if c.Gone {
				t.Fatalf("the held lease was seen gone: %+v", c)
			}
		case <-a.Lost():
			t.Fatalf("lost a lease its holder kept alive: %v", a.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	wantHeld(t, other, "owner", "host-a")
	if v, found, err := other.Get(ctx, "owner"); err != nil || !found || string(v) != "host-a" {
		t.Fatalf("Get = %q, %v, %v", v, found, err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, changes, "owner", 10*time.Second)
	if _, found, err := other.Get(ctx, "owner"); err != nil || found {
		t.Fatalf("Get after release: found %v, %v", found, err)
	}
	b := acquire(t, other, "owner", "host-b")
	wantHeld(t, ls, "owner", "host-b")
	select {
	case <-a.Lost():
		t.Fatal("Release closed Lost")
	default:
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A lease whose holder can no longer refresh it (its connection closed)
// expires on the server after its TTL: a watcher sees it gone within the
// TTL and a bound, not before the TTL; the holder learns it lost it; and
// another may then take it.
func TestALeaseNotRefreshedExpiresAndAWatcherSeesItGone(t *testing.T) {
	url := startServer(t)
	ls, nc := openLeases(t, url, "exp")
	other, _ := openLeases(t, url, "exp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := other.Watch(ctx, "workers.>")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ls.Keep(ctx, "workers.w1", []byte(`{"host":"a"}`), leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	// The watcher sees it written, and refreshed.
	var lastWrite time.Time
	for n := 0; n < 2; {
		select {
		case c := <-changes:
			if c.Key == "workers.w1" && !c.Gone && string(c.Value) == `{"host":"a"}` {
				lastWrite, n = time.Now(), n+1
			}
		case <-time.After(leaseTTL + expiryBound):
			t.Fatal("the watcher did not see the lease written and refreshed")
		}
	}
	nc.Close()
	cut := time.Now() // no refresh is sent after this
	var gone time.Time
	for gone.IsZero() {
		select {
		case c := <-changes:
			switch {
			case c.Key != "workers.w1":
			case c.Gone:
				gone = time.Now()
			default:
				lastWrite = time.Now() // a refresh sent just before the cut
			}
		case <-time.After(leaseTTL + expiryBound):
			t.Fatalf("not seen gone %v after the last refresh could be sent", leaseTTL+expiryBound)
		}
	}
	t.Logf("the expiry was seen %v after the last refresh was seen (TTL %v), %v after the connection closed",
		gone.Sub(lastWrite).Round(time.Millisecond), leaseTTL, gone.Sub(cut).Round(time.Millisecond))
	if gone.Sub(lastWrite) > leaseTTL+expiryBound {
		t.Fatalf("seen gone %v after its last refresh, TTL %v", gone.Sub(lastWrite), leaseTTL)
	}
	select {
	case <-l.Lost():
		if !errors.Is(l.Err(), natsstore.ErrLost) {
			t.Fatalf("Err = %v, want ErrLost", l.Err())
		}
	case <-time.After(leaseTTL + expiryBound):
		t.Fatal("the holder was not told it lost the lease")
	}
	acquire(t, other, "workers.w1", "w1 again")
}

// A holder killed with SIGKILL loses the lease after its TTL: another
// acquire fails while it lives and succeeds within the TTL and a bound
// after the kill.
func TestAKilledHoldersLeaseExpires(t *testing.T) {
	url := startServer(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), envLeaseURL+"="+url)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	ls, _ := openLeases(t, url, "kill")
	wantHeld(t, ls, "owner", fmt.Sprint("pid ", child.Process.Pid))
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = child.Wait()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := ls.Acquire(ctx, "owner", []byte("next"), leaseTTL)
		cancel()
		if err == nil {
			t.Logf("taken %v after the holder was killed (TTL %v)", time.Since(killed).Round(time.Millisecond), leaseTTL)
			_ = l.Release(context.Background())
			return
		}
		if !errors.Is(err, natsstore.ErrHeld) {
			t.Fatal(err)
		}
		if time.Since(killed) > leaseTTL+expiryBound {
			t.Fatalf("still held %v after the holder was killed", time.Since(killed))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Keys and TTLs the server cannot keep are refused with one sentence.
func TestLeaseRefusesBadKeysAndTTLs(t *testing.T) {
	ls, _ := openLeases(t, startServer(t), "bad")
	ctx := context.Background()
	for _, key := range []string{"", "a..b", "*", ">", "a b", "workers.>"} {
		if l, err := ls.Acquire(ctx, key, nil, leaseTTL); err == nil {
			_ = l.Release(ctx)
			t.Errorf("acquired key %q", key)
		}
	}
	for _, ttl := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond} {
		if l, err := ls.Acquire(ctx, "owner", nil, ttl); err == nil {
			_ = l.Release(ctx)
			t.Errorf("acquired with TTL %v", ttl)
		}
	}
}

// On a 3-node cluster with the bucket on all three, a lease outlives the
// loss of the node leading the bucket (its refreshes go to the new
// leader), and a lease no longer refreshed then expires and is seen gone.
func TestClusterLeaseOutlivesTheBucketLeadersLoss(t *testing.T) {
	c := startCluster(t)
	const team = "lease3"
	ls, _ := openLeases(t, c.urls, team, natsstore.Replicas(3))
	other, _ := openLeases(t, c.urls, team)
	// The lease must outlive the election of the bucket's next leader,
	// which on a loaded machine can take longer than the 2 s the other
	// tests give a lease (the owner's is 10 s): it failed at load 10+.
	const ttl = clusterLeaseTTL
	l := acquireFor(t, ls, "owner", "host-a", ttl)
	wantHeld(t, other, "owner", "host-a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := other.Watch(ctx, ">")
	if err != nil {
		t.Fatal(err)
	}
	leader := streamLeader(t, c, "KV_"+natsstore.LeaseBucketName(team))
	t.Logf("stopping %s, the bucket's leader", leader)
	c.node(leader).Shutdown()
	for end := time.Now().Add(2 * ttl); time.Now().Before(end); {
		select {
		case ch := <-changes:
			if ch.Gone {
				t.Fatalf("the held lease was seen gone: %+v", ch)
			}
		case <-l.Lost():
			t.Fatalf("lost a lease its holder kept alive: %v", l.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	wantHeld(t, other, "owner", "host-a")
	// A second lease, kept by a connection then closed, expires. A watch
	// begun before the loss may sit on the stopped node's connection until
	// its consumer is found gone (idle heartbeats, several seconds): this
	// one begins on the nodes left.
	changes, err = other.Watch(ctx, "workers.>")
	if err != nil {
		t.Fatal(err)
	}
	ls2, nc2 := openLeases(t, c.urls, team)
	w, err := ls2.Keep(ctx, "workers.w2", []byte("w2"), ttl)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(context.Background())
	nc2.Close()
	waitGone(t, changes, "workers.w2", 2*ttl+expiryBound)
	acquire(t, other, "workers.w2", "w2 again")
}

// streamLeader is the node leading stream.
func streamLeader(t *testing.T, c *cluster, stream string) string {
	t.Helper()
	nc := connect(t, c.urls, natsconn.ConnectOptions{})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var leader string
	var last error
	testkit.EventuallyF(t, 30*time.Second, "a leader of stream "+stream, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, stream)
		var info *jetstream.StreamInfo
		if err == nil {
			info, err = st.Info(ctx)
		}
		if last = err; err == nil && info.Cluster != nil {
			leader = info.Cluster.Leader
		}
		return leader != ""
	}, func() string { return fmt.Sprint(last) })
	return leader
}

// With a users file, a team's user holds and watches its own team's
// leases (the permissions let it), and cannot open another team's.
func TestATeamsUserHoldsItsLeasesAndNotAnothersTeams(t *testing.T) {
	s := start(t, natsserver.ServerOptions{Users: []natsserver.TeamUser{
		{Team: "alpha", User: "alice", Password: "alpha-secret"},
		{Team: "beta", User: "bob", Password: "beta-secret"},
	}})
	var v testkit.Errors
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("alice", "alpha-secret"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { v.Add(err) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ls, err := natsstore.OpenLeases(ctx, nc, "alpha")
	if err != nil {
		t.Fatalf("alpha opens its leases: %v", err)
	}
	changes, err := ls.Watch(ctx, ">")
	if err != nil {
		t.Fatalf("alpha watches its leases: %v", err)
	}
	l := acquire(t, ls, "owner", "a")
	wantHeld(t, ls, "owner", "a")
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, changes, "owner", 10*time.Second)
	try, cancelTry := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelTry()
	if _, err := natsstore.OpenLeases(try, nc, "beta"); err == nil {
		t.Fatal("alpha's user opened beta's leases")
	}
	v.WaitFor(t, `KV_agentteam_beta_leases"`)
}

// A watch served by a node that is then lost still reports a later expiry:
// its client moves to a node left and its consumer is made again once its
// heartbeats stop (seen 2 s or 8 s after the holder stopped, TTL 2 s).
func TestClusterWatchOutlivesTheLossOfItsNode(t *testing.T) {
	c := startCluster(t)
	const team = "watch3"
	ls, _ := openLeases(t, c.urls, team, natsstore.Replicas(3))
	leader := streamLeader(t, c, "KV_"+natsstore.LeaseBucketName(team))
	// The watcher's connection is to the bucket's leader first.
	nc, err := nats.Connect(c.node(leader).ClientURL()+","+c.urls, nats.DontRandomize(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wls, err := natsstore.OpenLeases(ctx, nc, team)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := wls.Watch(ctx, "workers.>")
	if err != nil {
		t.Fatal(err)
	}
	c.node(leader).Shutdown()
	ls2, nc2 := openLeases(t, c.urls, team)
	w, err := ls2.Keep(ctx, "workers.w2", []byte("w2"), leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(context.Background())
	nc2.Close()
	closed := time.Now()
	waitGone(t, changes, "workers.w2", leaseTTL+30*time.Second)
	t.Logf("the watch on the lost node's connection saw the expiry %v after its holder's connection closed (TTL %v)",
		time.Since(closed).Round(time.Millisecond), leaseTTL)
	if _, found, err := ls.Get(ctx, "workers.w2"); err != nil || found {
		t.Fatalf("Get after the expiry: found %v, %v", found, err)
	}
}
