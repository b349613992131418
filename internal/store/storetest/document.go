package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// DocOpener opens an instance of a document store; every call reaches the
// same document, as two processes on one workspace do. inc makes one change
// that must never be lost (add one to a counter in the document) and count
// reads that counter back.
type DocOpener[T any] struct {
	Open  func(t *testing.T) Doc[T]
	Inc   func(*T)
	Count func(T) int
}

// RunDoc runs the compare-and-set contract against o.
func RunDoc[T any](t *testing.T, o DocOpener[T]) {
	t.Run("RacingUpdatersLoseNothing", func(t *testing.T) { racing(t, o) })
	t.Run("AFailedChangeStoresNothing", func(t *testing.T) { failedChange(t, o) })
	t.Run("ACancelledCallDoesNothing", func(t *testing.T) { cancelledDoc(t, o) })
}

// racing: 4 instances × 5 goroutines × 40 updates, all on one document;
// the counter ends at exactly 800, and a reader never sees it go back.
func racing[T any](t *testing.T, o DocOpener[T]) {
	const instances, workers, each = 4, 5, 40
	base := o.Open(t)
	start, err := base.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	from := o.Count(start)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		last := from
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := base.Read(t.Context())
			if err != nil {
				t.Errorf("read during updates: %v", err)
				return
			}
			if n := o.Count(v); n < last {
				t.Errorf("a reader saw the counter go back from %d to %d", last, n)
				return
			} else {
				last = n
			}
		}
	}()
	var wg sync.WaitGroup
	for range instances {
		d := o.Open(t)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if _, err := d.Update(t.Context(), func(v *T) error { o.Inc(v); return nil }); err != nil {
						t.Errorf("update: %v", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	<-readerDone
	end, err := o.Open(t).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Count(end)-from, instances*workers*each; got != want {
		t.Fatalf("the counter rose by %d, want %d: %d updates lost", got, want, want-got)
	}
}

// failedChange: an update whose function fails stores nothing, even after
// it changed its copy, and the error comes back.
func failedChange[T any](t *testing.T, o DocOpener[T]) {
	d := o.Open(t)
	if _, err := d.Update(t.Context(), func(v *T) error { o.Inc(v); return nil }); err != nil {
		t.Fatal(err)
	}
	before, _ := d.Read(t.Context())
	refuse := errors.New("refused")
	if _, err := d.Update(t.Context(), func(v *T) error { o.Inc(v); return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("the failed change returned %v, want its own error", err)
	}
	after, _ := o.Open(t).Read(t.Context())
	if o.Count(after) != o.Count(before) {
		t.Fatalf("a failed change was stored: %d → %d", o.Count(before), o.Count(after))
	}
}

// cancelledDoc: an update whose context is done returns context.Canceled
// and stores nothing, nor does its function run; a read whose context is
// done returns context.Canceled.
func cancelledDoc[T any](t *testing.T, o DocOpener[T]) {
	d := o.Open(t)
	if _, err := d.Update(t.Context(), func(v *T) error { o.Inc(v); return nil }); err != nil {
		t.Fatal(err)
	}
	before, err := d.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	if _, err := d.Update(ctx, func(v *T) error { ran = true; o.Inc(v); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("update with its context done: %v, want context.Canceled", err)
	}
	if ran {
		t.Error("the change of an update with its context done ran")
	}
	if _, err := d.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with its context done: %v, want context.Canceled", err)
	}
	after, err := o.Open(t).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if o.Count(after) != o.Count(before) {
		t.Fatalf("an update with its context done was stored: %d → %d", o.Count(before), o.Count(after))
	}
}
