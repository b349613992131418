package exit

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// HardGrace is how long a run past its --timeout may take to end cleanly
// (teammates told, state written) before the process ends anyway.
const HardGrace = 1500 * time.Millisecond

// sayWait bounds the last sentence's write: stderr may be a pipe nobody reads.
const sayWait = 100 * time.Millisecond

// endNow ends the process with code, trying to say why first; it waits for
// nothing that may be stuck. State files stay whole: every one is replaced
// by rename or appended in one write.
func endNow(code int, sentence string) {
	said := make(chan struct{})
	go func() {
		fmt.Fprintf(os.Stderr, "agentteam: %s\n", sentence)
		close(said)
	}()
	select {
	case <-said:
	case <-time.After(sayWait):
	}
	os.Exit(code)
}

// HardStop makes a deadline a promise: at d from now the process ends with
// code and sentence, whatever is stuck (a blocked stderr, a tool in a
// syscall, a child holding a pipe). The returned func disarms it.
func HardStop(d time.Duration, code int, sentence string) (disarm func()) {
	t := time.AfterFunc(d, func() { endNow(code, sentence) })
	return func() { t.Stop() }
}

// InterruptTwice ends the process at once on a second Ctrl-C or SIGTERM,
// once ctx (cancelled by the first) is done: the first asks for a clean end,
// which may itself be what is stuck.
func InterruptTwice(ctx context.Context) (stop func()) {
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		select {
		case <-sig:
			endNow(Failure, "interrupted twice: stopped at once")
		case <-done:
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}
