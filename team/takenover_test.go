package team

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/team/registry"
)

// A status write made for a teammate whose entry is no longer its
// writer's claim (its respawn on another worker took it over: roster.guarded
// marks it notOurs) is refused with registry.ErrTakenOver and stores nothing, on the
// file and on the registry's entries alike: on entries a status change takes
// another path (memberChanger), which must keep the refusal.
func TestAStatusWriteOfATakenOverTeammateIsRefused(t *testing.T) {
	stores := map[string]func(t *testing.T) *registry.Registry{
		"file": func(t *testing.T) *registry.Registry {
			return registry.NewRegistry(filepath.Join(t.TempDir(), "config.json"), "tk")
		},
		"entries": func(t *testing.T) *registry.Registry { return natsRegistry(t, natsURL(t), "tk") },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			reg := open(t)
			if err := reg.Change(t.Context(), func(c *registry.Config) error {
				c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "r", Status: registry.StatusWorking, SpawnID: "s2", Worker: "w2"})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The zombie's guard: its claim was s1 on w1.
			late := func(m *registry.Member) {
				if m.SpawnID != "s1" || m.Worker != "w1" {
					m.MarkTakenOver()
					return
				}
				m.Error = "written by the zombie"
			}
			if err := reg.ChangeStatus(t.Context(), "alice", registry.StatusIdle, late); !errors.Is(err, registry.ErrTakenOver) {
				t.Errorf("ChangeStatus = %v, want registry.ErrTakenOver", err)
			}
			if err := reg.ChangeStatus(t.Context(), "alice", registry.StatusFailed, late); !errors.Is(err, registry.ErrTakenOver) {
				t.Errorf("SetStatus = %v, want registry.ErrTakenOver", err)
			}
			done := make(chan error, 1)
			reg.SetStatusLater("alice", registry.StatusShutdown, late, func(err error) { done <- err })
			reg.Flush()
			if err := <-done; !errors.Is(err, registry.ErrTakenOver) {
				t.Errorf("SetStatusLater = %v, want registry.ErrTakenOver", err)
			}
			c, err := reg.Read(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if i := c.Find("alice"); i < 0 || c.Teammates[i].Status != registry.StatusWorking || c.Teammates[i].Error != "" || c.Teammates[i].Worker != "w2" {
				t.Fatalf("alice after the refused writes: %+v", c.Teammates)
			}
		})
	}
}
