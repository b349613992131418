package team

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agentteam/agentteam/team/registry"
)

// The registry's own JSON (members' JSON kept between writes) is the bytes
// json.Marshal makes, after every kind of change a registry sees: a field
// set, a handoff changed in place, a cost changed through its pointer,
// members added, removed and reordered.
func TestRegistryJSONIsMarshals(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	cost := 0.25
	c := &registry.Config{TeamName: "t", Version: 1, UpdatedAt: now, State: registry.StateExecuting, Teammates: []registry.Member{},
		Lead: &registry.LeadEntry{ModelRef: registry.ModelRef{Model: "p/m", Provider: "p", ModelName: "m"}}}
	for i := range 5 {
		c.Teammates = append(c.Teammates, registry.Member{Name: fmt.Sprintf("w%d", i), Role: "worker", Status: registry.StatusQueued,
			CreatedAt: now.Add(time.Duration(i) * time.Second), UpdatedAt: now, Cost: &cost,
			Handoffs: []registry.HandoffState{{ID: "h1", Role: "sender", Peer: "w9", Task: "t <&>", State: "pending", UpdatedAt: now}}})
	}
	changes := []func(){
		func() {},
		func() { c.Teammates[1].Status = registry.StatusWorking; c.Teammates[1].Activity = "thinking \"hard\"" },
		func() { c.Teammates[2].Handoffs[0].State = "accepted" }, // in place, through the shared slice
		func() { *c.Teammates[3].Cost = 0.5 },                    // in place, through the pointer: all share it
		func() {
			c.Teammates[0].Handoffs = append(c.Teammates[0].Handoffs, registry.HandoffState{ID: "h2", UpdatedAt: now})
		},
		func() { c.Teammates[4].Cost = nil; c.Teammates[4].Tokens = 12 },
		func() { c.Teammates = append(c.Teammates[:1], c.Teammates[2:]...) },
		func() { c.Teammates = append(c.Teammates, registry.Member{Name: "w1", Role: "again", CreatedAt: now}) },
		func() { c.Teammates[0], c.Teammates[1] = c.Teammates[1], c.Teammates[0] },
		func() { c.Teammates[0].UpdatedAt = c.Teammates[0].UpdatedAt.Add(time.Nanosecond) },
		func() { c.Teammates = []registry.Member{} },
	}
	for i, change := range changes {
		change()
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("after change %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// copyMember must copy every field that refers to memory; a field of such
// a kind added to Member (or HandoffState) must be added there too, or the
// cached copy would change with the member and its JSON would go stale.
func TestCopyMemberCoversEveryReference(t *testing.T) {
	copied := map[string]bool{"Handoffs": true, "Cost": true, "Labels": true}
	member := reflect.TypeFor[registry.Member]()
	for i := range member.NumField() {
		f := member.Field(i)
		if refers(f.Type) && !copied[f.Name] {
			t.Errorf("Member.%s (%s) refers to memory: copy it in copyMember", f.Name, f.Type)
		}
	}
	handoff := reflect.TypeFor[registry.HandoffState]()
	for i := range handoff.NumField() {
		if f := handoff.Field(i); refers(f.Type) {
			t.Errorf("HandoffState.%s (%s) refers to memory: copy it in copyMember", f.Name, f.Type)
		}
	}
}

// refers reports whether a value of t shares memory when copied; a
// time.Time's location is never changed in place, so it does not count.
func refers(t reflect.Type) bool {
	if t == reflect.TypeFor[time.Time]() {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if refers(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Array:
		return refers(t.Elem())
	}
	return false
}
