package testkit

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Errors collects the errors reported on other goroutines (a NATS
// connection's asynchronous errors, such as a refused subscription) for
// a test to wait on. The zero value is ready.
type Errors struct {
	mu   sync.Mutex
	errs []error
}

// Add keeps err.
func (e *Errors) Add(err error) {
	e.mu.Lock()
	e.errs = append(e.errs, err)
	e.mu.Unlock()
}

// Reset forgets the errors kept so far.
func (e *Errors) Reset() {
	e.mu.Lock()
	e.errs = nil
	e.mu.Unlock()
}

// WaitFor waits up to 10 s until an error kept says want (in any case).
func (e *Errors) WaitFor(t testing.TB, want string) {
	t.Helper()
	EventuallyF(t, 10*time.Second, fmt.Sprintf("an asynchronous error that says %q", want), func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return slices.ContainsFunc(e.errs, func(err error) bool {
			return strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want))
		})
	}, func() string {
		e.mu.Lock()
		defer e.mu.Unlock()
		return fmt.Sprintf("got %v", e.errs)
	})
}
