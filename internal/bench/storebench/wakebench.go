//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// wakeResult is what the receiving process reports: per message, the time
// from just before the sender's Append to the receiver's wake (the Watch
// channel firing) and to the message in hand (ReadUnread returned it).
type wakeResult struct {
	Wake, InHand []time.Duration
	// Stale counts batches whose wake came before their first message was
	// sent (a coalesced signal of a message already read): not in Wake.
	Stale int
	CPU   time.Duration // the receiver's CPU while it received (getrusage)
	// CommitErrors counts Commits that failed; the receiver then reads
	// again at once, as the loop's next cycle would, and skips the ids it
	// already has (the loop's dedupe).
	CommitErrors   int
	FirstCommitErr string
}

const rxInbox = "rx"

// receiveChild waits on the inbox as a teammate does (Watch, then
// ReadUnread and Commit) until a "stop" message, timestamping each wake
// against the send time the sender wrote into the message (one host, one
// clock: CLOCK_REALTIME is shared by the two processes).
func receiveChild() int {
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := mb.Watch(ctx, rxInbox)
	fmt.Println("ready")
	var r wakeResult
	before := rusageSelf()
	seen := map[string]bool{}
	again := false // the last Commit failed: read again without a wake
	for done := false; !done; {
		if !again {
			select {
			case <-ch:
			case <-time.After(60 * time.Second):
				fmt.Fprintln(os.Stderr, "storebench: receiver: no wake for 60 s")
				return 1
			}
		}
		woke := time.Now()
		b, err := mb.ReadUnread(ctx, rxInbox)
		if err != nil {
			fmt.Fprintln(os.Stderr, "storebench: receiver: read:", err)
			return 1
		}
		inHand := time.Now()
		first := true
		for _, m := range b.Messages {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			if m.Content == "stop" {
				done = true
				continue
			}
			f, _, _ := strings.Cut(m.Content, " ")
			ns, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "storebench: receiver: message %q has no send time\n", m.Content)
				return 1
			}
			sent := time.Unix(0, ns)
			r.InHand = append(r.InHand, inHand.Sub(sent))
			if first && !again {
				if d := woke.Sub(sent); d >= 0 {
					r.Wake = append(r.Wake, d)
				} else {
					r.Stale++
				}
			}
			first = false
		}
		again = false
		if !b.Empty() {
			if err := mb.Commit(ctx, rxInbox, b); err != nil {
				r.CommitErrors++
				if r.FirstCommitErr == "" {
					r.FirstCommitErr = err.Error()
				}
				again = !done
				time.Sleep(time.Millisecond)
			}
		}
	}
	r.CPU = rusageSelf() - before
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 1
	}
	return 0
}

// wakeRun starts the receiving process, then appends sends messages from
// this process, pace apart, each carrying its send time. serverCPU is read
// once both processes have opened the store and again at the end.
func wakeRun(conf storeConf, sends int, pace time.Duration, serverCPU func() time.Duration) (r wakeResult, appends []time.Duration, srvCPU time.Duration, err error) {
	self, err := os.Executable()
	if err != nil {
		return wakeResult{}, nil, 0, err
	}
	c := exec.Command(self, receiveFlag)
	c.Env = append(os.Environ(), conf.env())
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		return wakeResult{}, nil, 0, err
	}
	if err := c.Start(); err != nil {
		return wakeResult{}, nil, 0, err
	}
	defer func() {
		if c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	rd := bufio.NewReader(out)
	if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		return wakeResult{}, nil, 0, fmt.Errorf("receiver did not start: %q %v", line, err)
	}
	mb, closeFn, err := conf.open()
	if err != nil {
		return wakeResult{}, nil, 0, err
	}
	defer closeFn()
	ctx := context.Background() // a benchmark run: nothing cancels it
	pad := strings.Repeat("x", 120)
	appends = make([]time.Duration, 0, sends)
	s0 := serverCPU()
	next := time.Now()
	for range sends {
		next = next.Add(pace)
		time.Sleep(time.Until(next))
		t0 := time.Now()
		if _, err := mb.Append(ctx, rxInbox, inbox.Message{Type: inbox.TypeMessage, From: "lead",
			Content: strconv.FormatInt(t0.UnixNano(), 10) + " " + pad}); err != nil {
			return wakeResult{}, nil, 0, err
		}
		appends = append(appends, time.Since(t0))
	}
	if _, err := mb.Append(ctx, rxInbox, inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "stop"}); err != nil {
		return wakeResult{}, nil, 0, err
	}
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		_ = c.Wait()
		return wakeResult{}, nil, 0, fmt.Errorf("receiver's result: %w", err)
	}
	srvCPU = serverCPU() - s0
	if err := c.Wait(); err != nil {
		return wakeResult{}, nil, 0, fmt.Errorf("receiver: %w", err)
	}
	if len(r.InHand) != sends {
		return r, appends, srvCPU, fmt.Errorf("receiver got %d messages of %d", len(r.InHand), sends)
	}
	return r, appends, srvCPU, nil
}
