package registry

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// The registry is rewritten whole at every change, and encoding its 200
// members was the largest user-space cost left of a registry write,
// though most members had not changed since the last write. AppendJSON
// keeps each member's JSON and encodes again only those that differ from
// the member it was made from (compared whole, field by field: sameMember,
// which TestSameMemberComparesEveryField keeps complete, so a field added
// to Member one day cannot be missed by the comparison; reflect.DeepEqual
// of every member at every write cost more than the rest of the check).

// memberJSONCache is the JSON of members as last encoded, by name. It is
// shared by every registry of the process: an entry of another registry's
// member of the same name is only a miss, never a wrong answer.
var memberJSONCache = struct {
	sync.Mutex
	byName map[string]*memberJSON
}{byName: map[string]*memberJSON{}}

// memberJSON is a member (a deep copy) and its JSON.
type memberJSON struct {
	m    Member
	data []byte
}

// maxCachedMembers bounds the cache; past it, it starts again empty.
const maxCachedMembers = 4096

// copyMember is m with nothing shared with it: a change made in place to
// the registry's member later must not change the cached copy too.
func copyMember(m *Member) Member {
	cp := *m
	cp.Handoffs = slices.Clone(m.Handoffs)
	cp.Labels = slices.Clone(m.Labels)
	if m.Cost != nil {
		v := *m.Cost
		cp.Cost = &v
	}
	return cp
}

// AppendJSON appends the registry's JSON to dst: the same bytes as
// json.Marshal(c) (TestRegistryJSONIsMarshals), made from the members'
// cached JSON where they have not changed.
func (c *Config) AppendJSON(dst []byte) ([]byte, error) {
	type plain Config // Config's fields without this method
	if c.Teammates == nil {
		data, err := json.Marshal((*plain)(c))
		return append(dst, data...), err
	}
	p := plain(*c)
	p.Teammates = nil
	head, err := json.Marshal(&p)
	if err != nil {
		return dst, err
	}
	// The members go where the null is: a key of the top-level object, the
	// only place these bytes can be (a quote inside a string is escaped).
	const hole = `"teammates":null`
	i := bytes.Index(head, []byte(hole))
	if i < 0 {
		data, err := json.Marshal((*plain)(c))
		return append(dst, data...), err
	}
	cache := &memberJSONCache
	cache.Lock()
	defer cache.Unlock()
	if len(cache.byName) > maxCachedMembers {
		cache.byName = map[string]*memberJSON{}
	}
	// Each member's JSON first, then one buffer of the right size: growing
	// it by appends cleared and copied ~100 KB several times per write.
	parts := make([][]byte, len(c.Teammates))
	size := len(head) + len(c.Teammates) + 2 + 1 // and the newline a file adds
	for j := range c.Teammates {
		m := &c.Teammates[j]
		e := cache.byName[m.Name]
		if e == nil || !sameEncoding(&e.m, m) {
			data, err := json.Marshal(m)
			if err != nil {
				return dst, err
			}
			e = &memberJSON{m: copyMember(m), data: data}
			cache.byName[m.Name] = e
		}
		parts[j] = e.data
		size += len(e.data)
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, head[:i]...)
	dst = append(dst, `"teammates":[`...)
	for j, data := range parts {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, data...)
	}
	dst = append(dst, ']')
	return append(dst, head[i+len(hole):]...), nil
}

// sameEncoding reports whether a and b encode alike: the same member, with
// their times equal as values, zones included (the JSON writes the zone;
// a monotonic reading only makes a needless miss).
func sameEncoding(a, b *Member) bool {
	return a.CreatedAt == b.CreatedAt && a.UpdatedAt == b.UpdatedAt && sameMember(a, b)
}
