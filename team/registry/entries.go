package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// The registry on a store of small entries (RegistryEntries: JetStream's
// KV, natsstore.Entries): one entry per teammate, "m.NAME", and one for the
// team's own fields, "team". A status change is one compare-and-set on its
// teammate's entry, whatever the size of the team; a change of the whole
// registry (Update) is applied to a copy and stores only the entries it
// changed, each expecting the revision it was made from, so no update is
// lost and two processes changing different teammates never conflict.
// The version is the newest entry's revision and the time its storing:
// both only grow, as the file's do.

// registryTeamKey is the entry of the team's own fields.
const registryTeamKey = "team"

// MemberKey is the key of name's entry.
func MemberKey(name string) string { return "m." + name }

// registryHead is the registry but for its teammates and what is derived
// from them (version, time, state).
type registryHead struct {
	TeamName     string         `json:"teamName"`
	LeadHandoffs []HandoffState `json:"leadHandoffs,omitempty"`
	Lead         *LeadEntry     `json:"lead,omitempty"`
	Sandbox      *SandboxState  `json:"sandbox,omitempty"`
}

func headOf(c *Config) registryHead {
	return registryHead{TeamName: c.TeamName, LeadHandoffs: c.LeadHandoffs, Lead: c.Lead, Sandbox: c.Sandbox}
}

// badEntry is an entry that is not what its key says (a hostile or broken
// writer): reading the registry fails with err instead of guessing.
type badEntry struct{ err error }

// DecodeRegistryEntry turns a stored entry into the value the entries
// store keeps (for natsstore.OpenEntries): a *Member, a *registryHead, or
// a badEntry that says what is wrong. Other keys are nil (left alone).
func DecodeRegistryEntry(key string, data []byte) any {
	switch {
	case key == registryTeamKey:
		var h registryHead
		if err := json.Unmarshal(data, &h); err != nil {
			return badEntry{fmt.Errorf("the registry's team entry is not JSON: %w", err)}
		}
		return &h
	case strings.HasPrefix(key, "m."):
		var m Member
		if err := json.Unmarshal(data, &m); err != nil {
			return badEntry{fmt.Errorf("the registry's entry %s is not JSON: %w", key, err)}
		}
		if m.Name != strings.TrimPrefix(key, "m.") {
			return badEntry{fmt.Errorf("the registry's entry %s holds a teammate named %q", key, m.Name)}
		}
		// A key may hold what no teammate's name can ("a/b"): said here,
		// not as a refusal of every later update of the registry.
		if err := inbox.ValidateName(m.Name); err != nil {
			return badEntry{fmt.Errorf("the registry's entry %.80q names no teammate: %w", key, err)}
		}
		return &m
	}
	return nil
}

// RegistryEntries is what the registry needs of a store of entries
// (natsstore.Entries). Values are those DecodeRegistryEntry made; the
// store never changes one in place, so they may be read after View.
type RegistryEntries interface {
	// Sync returns once the store's copy holds every entry stored before.
	Sync(ctx context.Context) error
	// View calls fn with every entry of the copy; it returns the newest
	// revision and when it was stored.
	View(fn func(key string, v any, rev uint64)) (newest uint64, stored time.Time)
	// Get is key's entry in the copy: rev 0 if never stored, ok false if none now.
	Get(key string) (v any, rev uint64, ok bool)
	// Fetch reads key from the server into the copy and returns it as Get.
	Fetch(ctx context.Context, key string) (v any, rev uint64, ok bool, err error)
	// Put stores each data[i] as keys[i] (nil: deletes it) if its revision
	// is still revs[i], all or none; lost: a revision had moved.
	Put(ctx context.Context, keys []string, data [][]byte, revs []uint64) (rev uint64, lost bool, err error)
}

// maxEntryTries bounds how often a change is made again after losing a
// race; only a teammate changed without pause by many writers reaches it.
const maxEntryTries = 1000

// entryRegistry is a RegistryStore on entries.
type entryRegistry struct {
	e        RegistryEntries
	teamName string
	size     atomic.Int64 // teammates at the last snapshot: the next one's capacity
	// whole serialises this process's whole-registry updates: each writes
	// the team's entry, so concurrent ones only lost races (50 parallel
	// spawns tried ~9 atomic batches each, every one a file store made and
	// removed on the server).
	whole sync.Mutex
}

// sameMember reports whether a and b are the same entry, field by field
// (reflect.DeepEqual cost a fifth of a 1,000-teammate run's CPU here);
// TestSameMemberComparesEveryField fails when a field of Member is left out.
func sameMember(a, b *Member) bool {
	return a.Name == b.Name && a.Role == b.Role && a.Status == b.Status &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Turns == b.Turns && a.Cycles == b.Cycles && a.Tokens == b.Tokens && a.ModelRef == b.ModelRef &&
		a.PromptTokens == b.PromptTokens && a.CompletionTokens == b.CompletionTokens &&
		(a.Cost == nil) == (b.Cost == nil) && (a.Cost == nil || *a.Cost == *b.Cost) &&
		a.Activity == b.Activity && a.PID == b.PID && a.Error == b.Error &&
		a.PlanMode == b.PlanMode && a.PlanState == b.PlanState && a.Ended == b.Ended &&
		slices.Equal(a.Handoffs, b.Handoffs) && a.Isolation == b.Isolation && a.Worktree == b.Worktree &&
		a.Branch == b.Branch && a.Diffstat == b.Diffstat && a.Merged == b.Merged &&
		a.PushRemote == b.PushRemote && a.PushURL == b.PushURL && a.PushedCommit == b.PushedCommit &&
		a.BaseNote == b.BaseNote && a.Base == b.Base &&
		a.Worker == b.Worker && a.Host == b.Host && slices.Equal(a.Labels, b.Labels) && a.SpawnID == b.SpawnID
}

// NewRegistryOnEntries is the registry kept in e, one entry per teammate.
// A registry kept whole by an earlier version (old, may be nil) is carried
// over into e the first time e has none.
func NewRegistryOnEntries(ctx context.Context, e RegistryEntries, teamName string, old RegistryStore) (*Registry, error) {
	s := &entryRegistry{e: e, teamName: registryTeamName(teamName)}
	if old != nil {
		if err := s.carryOver(ctx, old); err != nil {
			return nil, err
		}
	}
	return NewRegistryOn(s, teamName), nil
}

// carryOver writes a registry kept whole (one KV entry, as stores made
// before the entries kept it) into the entries, unless they already have the team's entry.
// Each entry is made only if absent: two processes doing it at once make
// each once. The team's entry goes last, so one cut short is done again.
func (s *entryRegistry) carryOver(ctx context.Context, old RegistryStore) error {
	if err := s.e.Sync(ctx); err != nil {
		return err
	}
	if _, _, ok := s.e.Get(registryTeamKey); ok {
		return nil
	}
	c, err := old.Read(ctx)
	if err != nil {
		return fmt.Errorf("carry over the registry kept whole: %w", err)
	}
	if c == nil || (c.Version == 0 && len(c.Teammates) == 0) {
		return nil
	}
	if c.TeamName == "" {
		c.TeamName = s.teamName
	}
	for i := range c.Teammates {
		m := &c.Teammates[i]
		if inbox.ValidateName(m.Name) != nil {
			continue // no such teammate could have been spawned: not carried
		}
		if err := s.create(ctx, MemberKey(m.Name), m); err != nil {
			return err
		}
	}
	h := headOf(c)
	return s.create(ctx, registryTeamKey, &h)
}

// create stores v as key if key has no entry (one made meanwhile is kept).
func (s *entryRegistry) create(ctx context.Context, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, rev, ok := s.e.Get(key)
	if ok {
		return nil
	}
	_, _, err = s.e.Put(ctx, []string{key}, [][]byte{data}, []uint64{rev})
	return err
}

// snapshot is the registry as the entries' copy holds it, the teammates in
// the order they were created, each a copy of its own; from holds the
// entries it was made from (by key, never changed) and their revisions.
type snapshot struct {
	c    *Config
	from map[string]fromEntry
}

// fromEntry is an entry as a snapshot found it.
type fromEntry struct {
	v   any
	rev uint64
}

func (s *entryRegistry) snapshot(withFrom bool) (snapshot, error) {
	c := EmptyConfig(s.teamName)()
	size := int(s.size.Load())
	c.Teammates = make([]Member, 0, size)
	var sn snapshot
	if withFrom {
		sn.from = make(map[string]fromEntry, size+1)
	}
	var bad error
	newest, stored := s.e.View(func(key string, v any, rev uint64) {
		switch v := v.(type) {
		case *Member:
			c.Teammates = append(c.Teammates, copyMember(v))
		case *registryHead:
			c.TeamName, c.Lead, c.Sandbox = v.TeamName, v.Lead, v.Sandbox
			c.LeadHandoffs = slices.Clone(v.LeadHandoffs)
			if v.Lead != nil {
				l := *v.Lead
				c.Lead = &l
			}
			if v.Sandbox != nil {
				sb := *v.Sandbox
				c.Sandbox = &sb
			}
		case badEntry:
			if bad == nil {
				bad = v.err
			}
			return
		default:
			return
		}
		if withFrom {
			sn.from[key] = fromEntry{v, rev}
		}
	})
	s.size.Store(int64(len(c.Teammates)))
	if bad != nil {
		return sn, bad
	}
	if c.TeamName == "" {
		c.TeamName = s.teamName
	}
	// The entries come about in creation order already: sorted only if not.
	byCreation := func(a, b Member) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Name, b.Name))
	}
	if !createdInOrder(c.Teammates, true) {
		slices.SortFunc(c.Teammates, byCreation)
	}
	c.Version, c.State = int64(newest), DeriveState(c.Teammates)
	if newest > 0 {
		c.UpdatedAt = stored.UTC()
	}
	sn.c = c
	return sn, nil
}

// Read returns the registry as stored when Read was called.
func (s *entryRegistry) Read(ctx context.Context) (*Config, error) {
	if err := s.e.Sync(ctx); err != nil {
		return nil, err
	}
	sn, err := s.snapshot(false)
	return sn.c, err
}

// Update applies fn to the registry as stored now and stores the entries
// it changed; after a lost race it reads again and applies fn again.
func (s *entryRegistry) Update(ctx context.Context, fn func(**Config) error) (*Config, error) {
	s.whole.Lock()
	defer s.whole.Unlock()
	for range maxEntryTries {
		if err := s.e.Sync(ctx); err != nil {
			return nil, err
		}
		sn, err := s.snapshot(true)
		if err != nil {
			return nil, err
		}
		c := sn.c
		if err := fn(&c); err != nil {
			if err == errNoChange {
				return sn.c, nil
			}
			return nil, err
		}
		keys, data, revs, err := s.changes(sn, c)
		if err != nil {
			return nil, err
		}
		rev, lost, err := s.e.Put(ctx, keys, data, revs)
		if err != nil {
			return nil, err
		}
		if lost {
			continue
		}
		if len(keys) > 0 {
			c.Version, c.UpdatedAt = int64(rev), time.Now().UTC()
		}
		c.State = DeriveState(c.Teammates)
		return c, nil
	}
	return nil, fmt.Errorf("update the registry: lost the race %d times in a row", maxEntryTries)
}

// changes are the entries c changes against the snapshot it was made from.
func (s *entryRegistry) changes(sn snapshot, c *Config) (keys []string, data [][]byte, revs []uint64, err error) {
	add := func(key string, v any) error {
		var d []byte
		if v != nil {
			if d, err = json.Marshal(v); err != nil {
				return fmt.Errorf("update the registry: %w", err)
			}
		}
		from, ok := sn.from[key]
		rev := from.rev
		if !ok {
			_, rev, _ = s.e.Get(key) // a deleted entry keeps its revision
		}
		keys, data, revs = append(keys, key), append(data, d), append(revs, rev)
		return nil
	}
	seen := make(map[string]bool, len(c.Teammates))
	for i := range c.Teammates {
		m := &c.Teammates[i]
		if err := inbox.ValidateName(m.Name); err != nil {
			return nil, nil, nil, fmt.Errorf("update the registry: %w", err)
		}
		if seen[m.Name] {
			return nil, nil, nil, fmt.Errorf("update the registry: two teammates are named %s", m.Name)
		}
		seen[m.Name] = true
		key := MemberKey(m.Name)
		if old, ok := sn.from[key].v.(*Member); ok && sameMember(old, m) {
			continue
		}
		if err := add(key, m); err != nil {
			return nil, nil, nil, err
		}
	}
	for key, from := range sn.from {
		if m, ok := from.v.(*Member); ok && !seen[m.Name] {
			if err := add(key, nil); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	// The team's entry goes with every change, changed or not: fn may have
	// decided on teammates it did not change (a bound on spawns waiting,
	// queueRoom; a name already taken), and a whole-registry change made
	// meanwhile elsewhere has written it, so this batch is refused and fn
	// runs again on what is stored now. Updates stay serial, as on the
	// file; a status change (ChangeMember) writes its teammate alone.
	h := headOf(c)
	if len(keys) > 0 || !sameHead(sn.from[registryTeamKey].v, &h) {
		if err := add(registryTeamKey, &h); err != nil {
			return nil, nil, nil, err
		}
	}
	return keys, data, revs, nil
}

// sameHead reports whether the stored team entry v holds h.
func sameHead(v any, h *registryHead) bool {
	old, ok := v.(*registryHead)
	return ok && reflect.DeepEqual(old, h)
}

// UpdateInPlace is Update: every change is made on a copy of its own.
func (s *entryRegistry) UpdateInPlace(ctx context.Context, fn func(**Config) error) (*Config, error) {
	return s.Update(ctx, fn)
}

// Submit is Update, done before it returns: a change costs one small
// write here, so there is nothing to gather.
func (s *entryRegistry) Submit(ctx context.Context, fn func(**Config) error, after func(error)) {
	_, err := s.Update(ctx, fn)
	after(err)
}

// Flush has nothing to wait for (Submit does not return before it is stored).
func (s *entryRegistry) Flush() {}

// ChangeMember applies fn to the named teammate's entry alone and stores
// it by compare-and-set on its revision: what a status change costs, one
// small read at most and one small write, whatever the size of the team.
func (s *entryRegistry) ChangeMember(ctx context.Context, name string, fn func(*Member) error) error {
	key := MemberKey(name)
	v, rev, ok := s.e.Get(key)
	fresh := false // v was read from the server, not the copy
	for range maxEntryTries {
		if !ok {
			var err error
			if v, rev, ok, err = s.e.Fetch(ctx, key); err != nil {
				return err
			}
			if !ok {
				return NoTeammateError{name}
			}
			fresh = true
		}
		var m Member
		switch v := v.(type) {
		case *Member:
			m = copyMember(v)
		case badEntry:
			return v.err
		default:
			return NoTeammateError{name}
		}
		if err := fn(&m); err != nil {
			if err == errNoChange && !fresh {
				// Nothing is written, so no compare-and-set checks the
				// copy: a copy behind (its watch lagging) decided it. A
				// worker ignored the respawn of a teammate whose old request
				// its copy still held, which then stayed queued for good.
				ok = false
				continue
			}
			if err == errNoChange {
				return nil
			}
			return err
		}
		data, err := json.Marshal(&m)
		if err != nil {
			return fmt.Errorf("update the registry: %w", err)
		}
		_, lost, err := s.e.Put(ctx, []string{key}, [][]byte{data}, []uint64{rev})
		if err != nil || !lost {
			return err
		}
		ok = false // another writer changed it: read it again
	}
	return fmt.Errorf("update %s in the registry: lost the race %d times in a row", name, maxEntryTries)
}
