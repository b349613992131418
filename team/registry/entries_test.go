package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// countingEntries is a process's entries that count what it asks of the
// server: freshness round trips, and each write's keys and size.
type countingEntries struct {
	RegistryEntries
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
func countedRegistry(t *testing.T, url, teamName string) (*Registry, *countingEntries) {
	t.Helper()
	e, err := natsstore.OpenEntries(context.Background(), natsConn(t, url), teamName, "registry", DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c := &countingEntries{RegistryEntries: e}
	r, err := NewRegistryOnEntries(t.Context(), c, teamName, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

func addMembers(t *testing.T, r *Registry, names ...string) {
	t.Helper()
	if err := r.Change(t.Context(), func(c *Config) error {
		for _, n := range names {
			c.Teammates = append(c.Teammates, Member{Name: n, Role: "worker", Status: StatusIdle, CreatedAt: time.Now().UTC()})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Two processes changing different teammates at once each write their
// teammate's entry alone (so they never race for one entry) and keep every
// change; both changing one teammate lose nothing either; a third process
// reads both.
func TestRegistryEntriesTwoProcessesChangeTeammatesAtOnce(t *testing.T) {
	testkit.SkipShort(t)
	url := natsURL(t)
	p1, c1 := countedRegistry(t, url, "two")
	p2, c2 := countedRegistry(t, url, "two")
	addMembers(t, p1, "alice", "bob", "carol")
	const each = 60
	bump := func(r *Registry, name string, via string) error {
		if via == "status" {
			return r.ChangeStatus(t.Context(), name, StatusWorking, func(m *Member) { m.Turns++ })
		}
		err := r.Change(t.Context(), func(c *Config) error {
			c.Teammates[c.Find(name)].Turns++
			return nil
		})
		return err
	}
	run := func(jobs map[*Registry][]string) {
		var wg sync.WaitGroup
		for r, names := range jobs {
			for _, spec := range names {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var name, via string
					fmt.Sscanf(spec, "%s %s", &name, &via)
					for range each {
						if err := bump(r, name, via); err != nil {
							t.Errorf("%s: %v", spec, err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
	}
	// Different teammates: p1 alice, p2 bob, each by status change and by a
	// whole-registry update.
	c1.reset()
	c2.reset()
	run(map[*Registry][]string{p1: {"alice status", "alice update"}, p2: {"bob status", "bob update"}})
	reader, _ := countedRegistry(t, url, "two")
	c, err := reader.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		if got := c.Teammates[c.Find(name)].Turns; got != 2*each {
			t.Fatalf("%s has %d turns after %d changes: %d lost", name, got, 2*each, 2*each-got)
		}
	}
	// A status change writes its teammate's entry alone; a whole-registry
	// update writes it and the team's entry, which keeps updates serial.
	for _, keys := range append(c1.puts, c2.puts...) {
		member := keys[0]
		if len(keys) == 2 && keys[1] != registryTeamKey || len(keys) > 2 || (member != "m.alice" && member != "m.bob") {
			t.Fatalf("a change of one teammate wrote %v, want its entry (and the team's, for an update)", keys)
		}
	}
	// One teammate from both processes: no lost update.
	run(map[*Registry][]string{p1: {"carol status", "carol update"}, p2: {"carol status", "carol update"}})
	if c, err = reader.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Teammates[c.Find("carol")].Turns; got != 4*each {
		t.Fatalf("carol has %d turns after %d changes from two processes: %d lost", got, 4*each, 4*each-got)
	}
}

// A status change in a team of 200 costs one small write and no read of
// the team: what the file's rewrite of the whole registry cost grows with
// the team, this does not.
func TestRegistryEntriesStatusChangeWritesItsTeammateAlone(t *testing.T) {
	url := natsURL(t)
	r, c := countedRegistry(t, url, "big")
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("w%03d", i))
	}
	addMembers(t, r, names...)
	c.reset()
	for _, n := range names[:50] {
		if err := r.ChangeStatus(t.Context(), n, StatusWorking, func(m *Member) { m.Activity = "thinking" }); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.syncs.Load(); n != 0 {
		t.Fatalf("50 status changes asked the server for the registry's newest revision %d times, want 0", n)
	}
	if len(c.puts) != 50 {
		t.Fatalf("50 status changes made %d writes", len(c.puts))
	}
	for i, keys := range c.puts {
		if len(keys) != 1 || keys[0] != MemberKey(names[i]) || c.bytes[i] > 1024 {
			t.Fatalf("status change %d wrote %v (%d bytes), want %s alone in under 1 KiB", i, keys, c.bytes[i], MemberKey(names[i]))
		}
	}
	got, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Teammates[0].Status != StatusWorking || got.Teammates[0].Activity != "thinking" || got.Teammates[199].Status != StatusIdle {
		t.Fatalf("read back: %+v … %+v", got.Teammates[0], got.Teammates[199])
	}
	if got.State != DeriveState(got.Teammates) || got.Version == 0 || got.UpdatedAt.IsZero() {
		t.Fatalf("derived fields: state %q version %d updated %v", got.State, got.Version, got.UpdatedAt)
	}
}

// A registry kept whole by an earlier version (one KV entry) is carried
// over into the entries when they have none, read as it was, and not
// carried again once the entries have moved on.
func TestRegistryEntriesCarryOverAWholeRegistry(t *testing.T) {
	url := natsURL(t)
	nc := natsConn(t, url)
	whole, err := natsstore.OpenDocWith(context.Background(), nc, "old", "registry", EmptyConfig("old"))
	if err != nil {
		t.Fatal(err)
	}
	oldReg := NewRegistryOn(whole, "old")
	cost := 0.25
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if err := oldReg.Change(t.Context(), func(c *Config) error {
		c.Teammates = append(c.Teammates,
			Member{Name: "alice", Role: "coder", Status: StatusIdle, CreatedAt: t0, Turns: 3, Cost: &cost, Labels: []string{"gpu"}},
			Member{Name: "bob", Role: "tester", Status: StatusShutdown, CreatedAt: t0.Add(time.Second), Ended: true})
		c.Lead = &LeadEntry{ModelRef: ModelRef{Model: "p/m"}}
		c.Sandbox = &SandboxState{On: true, State: "on"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	before, err := oldReg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	reg := entriesRegistry(t, natsConn(t, url), "old", whole)
	after, err := reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// What the whole document derived (version, time) is the entries' own.
	before.Version, before.UpdatedAt, after.Version, after.UpdatedAt = 0, time.Time{}, 0, time.Time{}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("carried over:\n%+v\nwant\n%+v", after, before)
	}
	// The shape of `team --json` is Config's: the same keys either way.
	keysOf := func(c Config) []string {
		data, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if a, b := keysOf(after), keysOf(before); !reflect.DeepEqual(a, b) {
		t.Fatalf("JSON keys %v, want %v", a, b)
	}
	if err := reg.ChangeStatus(t.Context(), "alice", StatusWorking, nil); err != nil {
		t.Fatal(err)
	}
	again, err := entriesRegistry(t, natsConn(t, url), "old", whole).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again.Teammates[again.Find("alice")].Status != StatusWorking {
		t.Fatal("opening again carried the old registry over the entries' newer one")
	}
}

// sameMember must tell apart two members that differ in any one field,
// including one added to Member after it was written.
func TestSameMemberComparesEveryField(t *testing.T) {
	var setOne func(v reflect.Value, path string, check func(string))
	setOne = func(v reflect.Value, path string, check func(string)) {
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue // not stored (Member.notOurs)
			}
			f, name := v.Field(i), path+v.Type().Field(i).Name
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			switch {
			case f.Type() == reflect.TypeOf(time.Time{}):
				f.Set(reflect.ValueOf(time.Unix(1, 0)))
			case f.Kind() == reflect.Struct:
				setOne(f, name+".", check)
				continue
			case f.Kind() == reflect.String:
				f.SetString("x")
			case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
				f.SetInt(1)
			case f.Kind() == reflect.Bool:
				f.SetBool(true)
			case f.Kind() == reflect.Pointer:
				f.Set(reflect.New(f.Type().Elem()))
			case f.Kind() == reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			default:
				t.Fatalf("%s: no test value for a %s", name, f.Kind())
			}
			check(name)
			f.Set(old)
		}
	}
	var a, b Member
	setOne(reflect.ValueOf(&b).Elem(), "", func(field string) {
		if sameMember(&a, &b) {
			t.Errorf("sameMember does not see a change of %s", field)
		}
	})
	cost1, cost2 := 1.0, 2.0
	a.Cost, b.Cost = &cost1, &cost2
	if sameMember(&a, &b) {
		t.Error("sameMember does not see a change of the cost's value")
	}
	b = copyMember(&a)
	if !sameMember(&a, &b) {
		t.Error("a copy is not the same member")
	}
}

// Whole-registry updates stay serial on entries: two processes that each
// add a teammate only while none waits (as queueRoom bounds the spawns
// waiting for a worker) cannot both succeed, though each writes a
// different teammate's entry.
func TestRegistryEntriesUpdatesDecideOnWhatOthersChanged(t *testing.T) {
	url := natsURL(t)
	for round := range 10 {
		teamName := fmt.Sprintf("skew%d", round)
		p1, p2 := natsRegistry(t, url, teamName), natsRegistry(t, url, teamName)
		addMembers(t, p1, "idle") // the team's entry is stored: only the new teammates' differ
		errFull := errors.New("one already waits")
		// Both read the registry before either writes: each first try
		// waits for the other's.
		var read sync.WaitGroup
		read.Add(2)
		add := func(r *Registry, name string) error {
			first := true
			err := r.Change(t.Context(), func(c *Config) error {
				if first {
					first = false
					read.Done()
					read.Wait()
				}
				for _, m := range c.Teammates {
					if m.Status == StatusQueued {
						return errFull
					}
				}
				c.Teammates = append(c.Teammates, Member{Name: name, Role: "r", Status: StatusQueued})
				return nil
			})
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for i, r := range []*Registry{p1, p2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = add(r, fmt.Sprintf("t%d", i))
			}()
		}
		close(start)
		wg.Wait()
		c, err := natsRegistry(t, url, teamName).Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Teammates) != 2 {
			t.Fatalf("round %d: %d teammates (one idle) (%v), want 2: an update decided on a registry another had changed", round, len(c.Teammates), errs)
		}
		if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errs[0], errFull) && !errors.Is(errs[1], errFull) {
			t.Fatalf("round %d: the two updates returned %v, want one refused", round, errs)
		}
	}
}

// Whole-registry updates made at once in one process (the lead's parallel
// spawns) each write once: every one writes the team's entry, so run
// together they only lost races to each other, and each lost try was an
// atomic batch the server stored in a file store of its own and removed.
func TestRegistryEntriesUpdatesOfOneProcessDoNotRace(t *testing.T) {
	url := natsURL(t)
	r, c := countedRegistry(t, url, "par")
	const n = 24
	c.reset()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Change(t.Context(), func(c *Config) error {
				c.Teammates = append(c.Teammates, Member{Name: fmt.Sprintf("p%02d", i), Role: "worker", Status: StatusQueued, CreatedAt: time.Now().UTC()})
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Teammates) != n {
		t.Fatalf("%d teammates after %d spawns", len(got.Teammates), n)
	}
	if len(c.puts) != n {
		t.Fatalf("%d whole-registry updates at once tried %d writes, want %d (one each)", n, len(c.puts), n)
	}
}

// An entry another host wrote under a key no teammate's name can have
// (a path, a dot) is a bad entry with a sentence naming it, not a
// teammate every later whole-registry update refuses to write back.
func TestARegistryEntryWithAHostileNameIsBad(t *testing.T) {
	for _, name := range []string{"a/b", "..", "a.b"} {
		data := mustJSON(t, Member{Name: name, Role: "x", Status: StatusIdle})
		v := DecodeRegistryEntry("m."+name, data)
		bad, ok := v.(badEntry)
		if !ok {
			t.Errorf("entry m.%s decoded as %T, want a bad entry", name, v)
			continue
		}
		if !strings.Contains(bad.err.Error(), "names no teammate") {
			t.Errorf("entry m.%s: %v", name, bad.err)
		}
	}
	if v, ok := DecodeRegistryEntry("m.alice", mustJSON(t, Member{Name: "alice"})).(*Member); !ok || v.Name != "alice" {
		t.Errorf("a good entry decoded as %#v", v)
	}
}

// natsURL is a JetStream server of the test's own on 127.0.0.1.
func natsURL(t *testing.T) string {
	t.Helper()
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// natsConn is a new connection to url, as another process would open.
func natsConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// entriesRegistry is the registry of teamName in entries on nc, carrying
// old over.
func entriesRegistry(t *testing.T, nc *nats.Conn, teamName string, old RegistryStore) *Registry {
	t.Helper()
	e, err := natsstore.OpenEntries(context.Background(), nc, teamName, "registry", DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r, err := NewRegistryOnEntries(t.Context(), e, teamName, old)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// natsRegistry is the registry of teamName on url as a process opens it:
// an entry per teammate, on a connection of its own.
func natsRegistry(t *testing.T, url, teamName string) *Registry {
	t.Helper()
	return entriesRegistry(t, natsConn(t, url), teamName, nil)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
