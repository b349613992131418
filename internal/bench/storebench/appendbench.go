//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// content makes each inbox line about 300 bytes (see lineBytes).
var content = strings.Repeat("the quick brown fox jumps over the lazy dog. ", 4)[:150]

// lineBytes is the size of one appended line, as stored.
func lineBytes() int {
	_, line, err := inbox.Encode("r0", inbox.Message{Type: inbox.TypeMessage, From: "a00", Content: content})
	if err != nil {
		return 0
	}
	return len(line)
}

// appendResult is what the append child reports.
type appendResult struct {
	Count     int64
	Wall, CPU time.Duration
	Errors    int64
	FirstErr  string
}

// appendChild runs in its own process: N goroutines append for the given
// time, to one inbox ("one") or each to its own ("own"); it reports the
// count, the wall time and its own CPU over the timed part (getrusage).
func appendChild(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "storebench: -append N one|own SECONDS")
		return 2
	}
	n, _ := strconv.Atoi(args[0])
	shape := args[1]
	secs, _ := strconv.ParseFloat(args[2], 64)
	conf, err := confFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		return 1
	}
	mb, closeFn, err := conf.open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench: open:", err)
		return 1
	}
	defer closeFn()
	target := func(i int) string {
		if shape == "own" {
			return fmt.Sprintf("r%d", i)
		}
		return "r0"
	}
	msg := func(i int) inbox.Message {
		return inbox.Message{Type: inbox.TypeMessage, From: fmt.Sprintf("a%02d", i), Content: content}
	}
	ctx := context.Background() // a benchmark's child: nothing cancels it
	// Warm: each inbox exists (its file, its subject) before the clock starts.
	for i := range n {
		if _, err := mb.Append(ctx, target(i), msg(i)); err != nil {
			fmt.Fprintln(os.Stderr, "storebench: append:", err)
			return 1
		}
	}
	// The harness reads the servers' CPU when told the timed part starts.
	fmt.Println("go")
	var count, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	before := rusageSelf()
	start := time.Now()
	deadline := start.Add(time.Duration(secs * float64(time.Second)))
	for i := range n {
		wg.Go(func() {
			m := msg(i)
			to := target(i)
			for time.Now().Before(deadline) {
				if _, err := mb.Append(ctx, to, m); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := rusageSelf() - before
	r := appendResult{Count: count.Load(), Wall: wall, CPU: cpu, Errors: errs.Load()}
	if e, ok := firstErr.Load().(string); ok {
		r.FirstErr = e
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 1
	}
	return 0
}

func rusageSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
