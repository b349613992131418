package registry

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// createdInOrder answers as slices.IsSortedFunc does with the comparisons
// it stands in for, on members created at few distinct times.
func TestCreatedInOrderIsIsSortedFunc(t *testing.T) {
	byTime := func(a, b Member) int { return a.CreatedAt.Compare(b.CreatedAt) }
	byTimeName := func(a, b Member) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Name, b.Name))
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		ms := make([]Member, r.IntN(6))
		for j := range ms {
			ms[j] = Member{Name: string(rune('a' + r.IntN(3))), CreatedAt: base.Add(time.Duration(r.IntN(3)) * time.Second)}
		}
		if i%2 == 0 {
			slices.SortFunc(ms, byTimeName) // sorted ones are as common as not
		}
		if got, want := createdInOrder(ms, false), slices.IsSortedFunc(ms, byTime); got != want {
			t.Fatalf("by time, %v: %v, want %v", ms, got, want)
		}
		if got, want := createdInOrder(ms, true), slices.IsSortedFunc(ms, byTimeName); got != want {
			t.Fatalf("by time and name, %v: %v, want %v", ms, got, want)
		}
	}
}

// A member whose time moved to another zone (the same instant) is encoded
// again: its JSON shows the zone, so the cached bytes would be stale.
func TestAppendJSONSeesAZoneChange(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := &Config{TeamName: "zone", Teammates: []Member{{Name: "zone-w1", CreatedAt: at, UpdatedAt: at}}}
	for _, zone := range []*time.Location{time.UTC, time.FixedZone("X", 3600), time.UTC} {
		c.Teammates[0].UpdatedAt = at.In(zone)
		got, err := c.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		type plain Config
		want, _ := json.Marshal((*plain)(c))
		if string(got) != string(want) {
			t.Fatalf("in %s:\n got %s\nwant %s", zone, got, want)
		}
	}
}
