package team

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
)

// countingEntries is a process's entries that count what it asks of the
// server: freshness round trips, and each write's keys and size.
type countingEntries struct {
	registry.RegistryEntries
	syncs atomic.Int64
	mu    sync.Mutex
	puts  [][]string
	bytes []int
}

func (c *countingEntries) Sync(ctx context.Context) error {
	c.syncs.Add(1)
	return c.RegistryEntries.Sync(ctx)
}

func (c *countingEntries) Put(ctx context.Context, keys []string, data [][]byte, revs []uint64) (uint64, bool, error) {
	rev, lost, err := c.RegistryEntries.Put(ctx, keys, data, revs)
	n := 0
	for _, d := range data {
		n += len(d)
	}
	c.mu.Lock()
	c.puts, c.bytes = append(c.puts, keys), append(c.bytes, n)
	c.mu.Unlock()
	return rev, lost, err
}

func (c *countingEntries) reset() {
	c.syncs.Store(0)
	c.mu.Lock()
	c.puts, c.bytes = nil, nil
	c.mu.Unlock()
}

// countedRegistry is the registry of teamName on url as a process opens
// it, with its entries counted.
func countedRegistry(t *testing.T, url, teamName string) (*registry.Registry, *countingEntries) {
	t.Helper()
	e, err := natsstore.OpenEntries(context.Background(), natsConn(t, url), teamName, "registry", registry.DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c := &countingEntries{RegistryEntries: e}
	r, err := registry.NewRegistryOnEntries(t.Context(), c, teamName, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

// A worker's claim of a spawned teammate writes that teammate's entry
// alone: it decides on nothing else, and as a whole-registry update (which
// writes the team's entry) it raced every spawn and every other worker's
// claim. A claim of a request the registry no longer waits for writes
// nothing and takes nothing.
func TestAWorkerClaimWritesItsTeammateAlone(t *testing.T) {
	url := natsURL(t)
	r, c := countedRegistry(t, url, "claim")
	if err := r.Change(t.Context(), func(cf *registry.Config) error {
		cf.Teammates = append(cf.Teammates,
			registry.Member{Name: "alice", Role: "worker", Status: registry.StatusQueued, SpawnID: "spawn-a", CreatedAt: time.Now().UTC()},
			registry.Member{Name: "bob", Role: "worker", Status: registry.StatusQueued, SpawnID: "spawn-b", CreatedAt: time.Now().UTC()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := &hosting{t: &Team{reg: r, pid: 4242}, opts: hosts.Options{ID: "w1", Host: "h1"}}
	c.reset()
	claimed, err := h.Claim(hosts.Request{ID: "spawn-a", Name: "alice"})
	if err != nil || !claimed {
		t.Fatalf("claim of alice: %v, %v", claimed, err)
	}
	if len(c.puts) != 1 || len(c.puts[0]) != 1 || c.puts[0][0] != registry.MemberKey("alice") {
		t.Fatalf("a claim wrote %v, want alice's entry alone", c.puts)
	}
	for _, req := range []hosts.Request{{ID: "spawn-a", Name: "alice"}, {ID: "spawn-old", Name: "bob"}, {ID: "spawn-x", Name: "mallory"}} {
		if claimed, err := h.Claim(req); err != nil || claimed {
			t.Fatalf("claim of %s (%s): %v, %v; want not claimed, no error", req.Name, req.ID, claimed, err)
		}
	}
	if len(c.puts) != 1 {
		t.Fatalf("claims the registry does not wait for wrote %v", c.puts[1:])
	}
	got, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a, b := got.Teammates[got.Find("alice")], got.Teammates[got.Find("bob")]
	if a.Worker != "w1" || a.Host != "h1" || a.PID != 4242 || a.Status != registry.StatusQueued || b.Worker != "" {
		t.Fatalf("after the claim: alice %+v, bob %+v", a, b)
	}
}

// A worker's claim decides on its registry copy; when it decides to write
// nothing (the entry waits for another request), no compare-and-set checks
// that copy. A copy behind the server (its watch lagging after a node was
// lost) so ignored a respawn's request, and the teammate stayed queued for
// good (the 300-teammate failover run). The decision is made again on the
// entry read from the server.
func TestAClaimIsNotRefusedOnAStaleCopy(t *testing.T) {
	url := natsURL(t)
	const teamName = "stale"
	e, err := natsstore.OpenEntries(context.Background(), natsConn(t, url), teamName, "registry", registry.DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := registry.NewRegistryOnEntries(t.Context(), e, teamName, nil)
	if err != nil {
		t.Fatal(err)
	}
	lead := natsRegistry(t, url, teamName)
	if err := lead.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "worker", Status: registry.StatusQueued, SpawnID: "s1", CreatedAt: time.Now().UTC()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if c, err := stale.Read(t.Context()); err != nil || c.Find("alice") < 0 {
		t.Fatalf("the worker's copy before its watch stops: %v, %v", c.Teammates, err)
	}
	e.Close() // its watch stops: the copy keeps alice's request s1
	if err := lead.ChangeTeammate(t.Context(), "alice", func(m *registry.Member) error { m.SpawnID = "s2"; return nil }); err != nil {
		t.Fatal(err) // the lead respawns her under a new request
	}
	h := &hosting{t: &Team{reg: stale, pid: 4242}, opts: hosts.Options{ID: "w1", Host: "h1"}}
	claimed, err := h.Claim(hosts.Request{ID: "s2", Name: "alice"})
	if err != nil || !claimed {
		t.Fatalf("the claim of alice's new request on a copy behind: claimed %v, %v; want claimed", claimed, err)
	}
	c, err := lead.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Teammates[c.Find("alice")]; a.Worker != "w1" || a.SpawnID != "s2" {
		t.Fatalf("alice after the claim: worker %q, request %q; want w1, s2", a.Worker, a.SpawnID)
	}
}
