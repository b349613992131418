package statefile_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/statefile"
	"github.com/agentteam/agentteam/internal/storetest"
)

// counter is the smallest document: a counter and the version Changed bumps.
type counter struct {
	N       int   `json:"n"`
	Version int64 `json:"version"`
}

func (c *counter) Clone() *counter { cp := *c; return &cp }
func (c *counter) Changed()        { c.Version++ }

// A Doc keeps the compare-and-set document contract by itself; the
// registry (team) and the task board (team/board) run it again on theirs.
func TestDocKeepsTheDocContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc", "counter.json")
	storetest.RunDoc(t, storetest.DocOpener[*counter]{
		Open: func(t *testing.T) storetest.Doc[*counter] {
			return statefile.NewDoc(path, "counter", func() *counter { return &counter{} })
		},
		Inc:   func(c **counter) { (*c).N++ },
		Count: func(c *counter) int { return c.N },
	})
}

// A change function that panics (a bug) fails its batch with an error
// instead of keeping the writer's role taken: the next update is written.
func TestDocSurvivesAPanickingChange(t *testing.T) {
	d := statefile.NewDoc(filepath.Join(t.TempDir(), "counter.json"), "counter", func() *counter { return &counter{} })
	_, err := d.Update(func(**counter) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "internal error while writing the counter: boom") {
		t.Fatalf("a panicking change returned %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.Update(func(c **counter) error { (*c).N++; return nil })
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the update after a panic waits forever")
	}
	if c, err := d.Read(); err != nil || c.N != 1 || c.Version != 1 {
		t.Fatalf("after the panic and one change: %+v, %v", c, err)
	}
}

// A submitted change is written by itself, without a Flush or a change
// that waits (Submit waits a few milliseconds for company, then writes),
// and its callback comes once it is on disk.
func TestDocWritesASubmittedChangeAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.json")
	d := statefile.NewDoc(path, "counter", func() *counter { return &counter{} })
	reported := make(chan error, 2)
	for range 2 {
		d.Submit(func(c **counter) error { (*c).N++; return nil }, func(err error) { reported <- err })
	}
	for i := range 2 {
		select {
		case err := <-reported:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 2 submitted changes reported: nothing writes them", i)
		}
	}
	onDisk, err := statefile.NewDoc(path, "counter", func() *counter { return &counter{} }).Read()
	if err != nil || onDisk.N != 2 || onDisk.Version != 2 {
		t.Fatalf("on disk after both reports: %+v, %v; want 2 changes", onDisk, err)
	}
}
