package statefile_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/store/storetest"
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
	_, err := d.Update(t.Context(), func(**counter) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "internal error while writing the counter: boom") {
		t.Fatalf("a panicking change returned %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.Update(t.Context(), func(c **counter) error { (*c).N++; return nil })
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
	if c, err := d.Read(t.Context()); err != nil || c.N != 1 || c.Version != 1 {
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
		d.Submit(t.Context(), func(c **counter) error { (*c).N++; return nil }, func(err error) { reported <- err })
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
	onDisk, err := statefile.NewDoc(path, "counter", func() *counter { return &counter{} }).Read(t.Context())
	if err != nil || onDisk.N != 2 || onDisk.Version != 2 {
		t.Fatalf("on disk after both reports: %+v, %v; want 2 changes", onDisk, err)
	}
}

// The document a change works on is the cached one, handed over without a
// copy: a change that fails half-way must leave no trace in it, and what a
// caller is handed must not be the cache (a caller that changes its copy
// changes nothing else).
func TestDocCacheIsNeverShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.json")
	d := statefile.NewDoc(path, "counter", func() *counter { return &counter{} })
	got, err := d.Update(t.Context(), func(c **counter) error { (*c).N = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	got.N = 99 // the caller's copy
	if _, err := d.Update(t.Context(), func(c **counter) error { (*c).N = 42; return errors.New("refused half-way") }); err == nil {
		t.Fatal("the failing change reported no error")
	}
	if err := d.Change(t.Context(), func(c **counter) error { return statefile.ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	c, err := d.Read(t.Context())
	if err != nil || c.N != 1 || c.Version != 1 {
		t.Fatalf("after a change, a caller's edit of its copy and a failed change: %+v, %v; want n 1, version 1", c, err)
	}
	c.N = 77 // a reader's copy
	if err := d.Change(t.Context(), func(c **counter) error { (*c).N++; return nil }); err != nil {
		t.Fatal(err)
	}
	onDisk, err := statefile.NewDoc(path, "counter", func() *counter { return &counter{} }).Read(t.Context())
	if err != nil || onDisk.N != 2 || onDisk.Version != 2 {
		t.Fatalf("on disk after Change: %+v, %v; want n 2, version 2", onDisk, err)
	}
	if c, err := d.Read(t.Context()); err != nil || c.N != 2 {
		t.Fatalf("read through the doc after Change: %+v, %v; want n 2", c, err)
	}
}

// Two changes of one key never share a write: whoever is told of the first
// (its callback, after its write) finds the file holding it, not the second
// (a teammate's working and idle, submitted a moment apart, each
// have their event follow a registry that shows them).
func TestDocKeyedChangesEachHaveTheirWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.json")
	d := statefile.NewDoc(path, "counter", func() *counter { return &counter{} })
	other := func() *counter {
		c, err := statefile.NewDoc(path, "counter", func() *counter { return &counter{} }).Read(t.Context())
		if err != nil {
			t.Error(err)
		}
		return c
	}
	// A change that holds the writer's role until the others are queued,
	// so that they would all share the next write.
	hold, held := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- d.ChangeKeyed(t.Context(), "b", func(c **counter) error { close(held); <-hold; (*c).N = 10; return nil })
	}()
	<-held
	seen := make(chan int, 3)
	d.SubmitKeyed(t.Context(), "a", func(c **counter) error { (*c).N = 1; return nil }, func(error) { seen <- other().N })
	d.SubmitKeyed(t.Context(), "c", func(c **counter) error { return nil }, func(error) {})
	d.SubmitKeyed(t.Context(), "a", func(c **counter) error { (*c).N = 2; return nil }, func(error) { seen <- other().N })
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{1, 2} {
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("told of the change to %d, the file holds %d", want, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the change to %d was never reported", want)
		}
	}
	d.Flush()
	if c := other(); c.N != 2 || c.Version != 4 {
		t.Fatalf("on disk at the end: %+v; want n 2 after 4 changes", c)
	}
}
