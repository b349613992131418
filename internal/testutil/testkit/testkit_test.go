package testkit

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fatalT records the failure and ends its goroutine, as t.Fatalf does.
type fatalT struct {
	testing.TB
	failed string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestEventuallyFWaitsThenTellsWhatItSaw(t *testing.T) {
	n := 0
	Eventually(t, 10*time.Second, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}

	f := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		EventuallyF(f, 30*time.Millisecond, "nothing", func() bool { return false }, func() string { return "saw 7" })
	}()
	<-done
	if want := "after 30ms: still waiting for nothing; saw 7"; f.failed != want {
		t.Fatalf("failure %q, want %q", f.failed, want)
	}
}
