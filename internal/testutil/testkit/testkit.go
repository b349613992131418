// Package testkit holds what the module's tests share: skipping the slow
// ones under -short, and waiting for a condition instead of sleeping.
// Only tests import it.
package testkit

import (
	"testing"
	"time"
)

// SkipShort skips a slow test (seconds of real time: a cluster, a
// failover, racing processes) under go test -short, the inner loop; the
// full suite runs it.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: not run under -short")
	}
}

// Eventually waits until cond holds, looking every 10 ms, and fails the
// test with what (what was awaited) once within has passed. It runs on the
// test's goroutine, so cond may call t.Fatal to fail at once.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyF(t, within, what, cond, nil)
}

// EventuallyF is Eventually for a wait whose failure should show what it
// saw: detail, if not nil, is called once the wait has failed, and its text
// ends the failure.
func EventuallyF(t testing.TB, within time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			if detail != nil {
				t.Fatalf("after %v: still waiting for %s; %s", within, what, detail())
			}
			t.Fatalf("after %v: still waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
