package request

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// On the bubble's fake clock: the request expires at its deadline, not a
// moment before, and its callback runs once, however long after.
func TestExpiryClosesTheRequestAndRunsItsCallbackOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := NewTable()
		defer tb.Close()
		got := make(chan Request, 2)
		r, err := tb.Open(Request{ID: "shutdown-1", Kind: "shutdown", From: "lead", To: "alice"}, 10*time.Millisecond, func(r Request) { got <- r })
		if err != nil {
			t.Fatal(err)
		}
		if r.Deadline.Sub(r.Opened) != 10*time.Millisecond {
			t.Fatalf("deadline %v after opening, want 10ms", r.Deadline.Sub(r.Opened))
		}
		time.Sleep(10*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("the request expired before its deadline")
		}
		if _, ok := tb.Get("shutdown-1"); !ok {
			t.Fatal("the request closed before its deadline")
		}
		e := <-got
		if e.ID != "shutdown-1" || e.Outcome != Expired {
			t.Fatalf("expired %+v", e)
		}
		if _, ok := tb.Get("shutdown-1"); ok {
			t.Fatal("an expired request is still open")
		}
		if _, ok := tb.Answer("shutdown-1", Match{Kind: "shutdown"}, Approved); ok {
			t.Fatal("an expired request was answered")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("the callback ran twice: %+v", <-got)
		}
	})
}

func TestAnswerFitsKindAndParties(t *testing.T) {
	tb := NewTable()
	defer tb.Close()
	if _, err := tb.Open(Request{ID: "plan-1", Kind: "plan", From: "alice", To: "lead"}, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Open(Request{ID: "plan-1", Kind: "plan"}, time.Hour, nil); err == nil {
		t.Fatal("a second request with the same id was opened")
	}
	for _, m := range []Match{{Kind: "shutdown"}, {Kind: "plan", From: "bob"}, {Kind: "plan", To: "alice"}} {
		if _, ok := tb.Answer("plan-1", m, Approved); ok {
			t.Fatalf("answered with %+v", m)
		}
	}
	if r, ok := tb.Find(Match{Kind: "plan", From: "alice"}); !ok || r.ID != "plan-1" {
		t.Fatalf("find: %+v %v", r, ok)
	}
	r, ok := tb.Answer("plan-1", Match{Kind: "plan", From: "alice", To: "lead"}, Rejected)
	if !ok || r.Outcome != Rejected {
		t.Fatalf("answer: %+v %v", r, ok)
	}
	if len(tb.List()) != 0 {
		t.Fatalf("open after the answer: %+v", tb.List())
	}
}

// TestAnswerAndDeadlineRaceToOneOutcome: an answer and an expiry at the
// same moment close the request once: either the answer counts or the
// callback runs, never both, never neither.
func TestAnswerAndDeadlineRaceToOneOutcome(t *testing.T) {
	tb := NewTable()
	defer tb.Close()
	for i := range 300 {
		id := fmt.Sprintf("r-%d", i)
		var expired atomic.Int32
		var wg sync.WaitGroup
		wg.Add(1)
		if _, err := tb.Open(Request{ID: id, Kind: "k"}, time.Millisecond, func(Request) { expired.Add(1); wg.Done() }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%3) * 500 * time.Microsecond)
		if _, answered := tb.Answer(id, Match{Kind: "k"}, Approved); answered {
			wg.Done()
		}
		wg.Wait()
		if n := expired.Load(); n > 1 {
			t.Fatalf("%s: callback ran %d times", id, n)
		}
	}
}

func TestWaitReturnsTheOutcomeOrTheContextsEnd(t *testing.T) {
	tb := NewTable()
	defer tb.Close()
	if _, err := tb.Open(Request{ID: "h-1", Kind: "handoff"}, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	go func() { tb.Answer("h-1", Match{Kind: "handoff"}, "accepted") }()
	o, ok, err := tb.Wait(context.Background(), "h-1")
	if err != nil || (ok && o != "accepted") {
		t.Fatalf("wait: %q %v %v", o, ok, err)
	}
	if _, open := tb.Get("h-1"); open {
		t.Fatal("h-1 is still open after its answer")
	}
	if _, err := tb.Open(Request{ID: "h-2", Kind: "handoff"}, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := tb.Wait(ctx, "h-2"); !ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("wait under a cancelled context: %v %v", ok, err)
	}
	if _, ok := tb.Get("h-2"); !ok {
		t.Fatal("a wait that gave up closed the request")
	}
}

// TestCloseWaitsForRunningCallbacks: Close returns only after an expiry
// callback already under way has finished, cancels what is still open
// without running callbacks, and refuses new requests.
func TestCloseWaitsForRunningCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := NewTable()
		started, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		if _, err := tb.Open(Request{ID: "slow", Kind: "k"}, time.Millisecond, func(Request) {
			close(started)
			<-release
			finished.Store(true)
		}); err != nil {
			t.Fatal(err)
		}
		ran := make(chan struct{}, 1)
		if _, err := tb.Open(Request{ID: "later", Kind: "k"}, time.Hour, func(Request) { ran <- struct{}{} }); err != nil {
			t.Fatal(err)
		}
		<-started
		closed := make(chan struct{})
		go func() { tb.Close(); close(closed) }()
		synctest.Wait() // Close is blocked for good, or has returned
		select {
		case <-closed:
			t.Fatal("Close returned while a callback was still running")
		default:
		}
		close(release)
		<-closed
		if !finished.Load() {
			t.Fatal("Close returned before the callback finished")
		}
		time.Sleep(2 * time.Hour) // past the cancelled request's deadline
		synctest.Wait()
		if len(ran) != 0 {
			t.Fatal("Close ran the callback of a request it cancelled")
		}
		if _, err := tb.Open(Request{ID: "new", Kind: "k"}, time.Hour, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("open after Close: %v", err)
		}
	})
}
