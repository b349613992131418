//go:build linux

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// callCounter counts what crosses a JetStream server by kind of subject:
// the API requests by name, acks, KV and stream publishes, the push
// deliveries of KV watches, and the replies to inboxes. It listens as one
// more client, which makes the server copy every message to it: a run
// counted is not a run timed.
type callCounter struct {
	nc *nats.Conn
	// closed is closed once the connection has drained: every callback
	// has run (each subscription has its own, so they run out of order).
	closed chan struct{}

	mu sync.Mutex
	n  map[string]int
}

// countCalls starts counting on the server at url. Not "$JS.>": interest
// in $JS.EVENT.> would make the server send an advisory per API request.
func countCalls(url string) (*callCounter, error) {
	closed := make(chan struct{})
	nc, err := nats.Connect(url, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return nil, err
	}
	c := &callCounter{nc: nc, closed: closed, n: map[string]int{}}
	for _, subj := range []string{"$JS.API.>", "$JS.ACK.>", "$KV.>", "agentteam.>", "_INBOX.>"} {
		if _, err := nc.Subscribe(subj, func(m *nats.Msg) {
			k := callKind(m.Subject, m.Reply)
			c.mu.Lock()
			c.n[k]++
			c.mu.Unlock()
		}); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return c, nc.Flush()
}

// stop ends the count and returns it, once every message the counter
// was sent has been counted (Drain returns before that).
func (c *callCounter) stop() map[string]int {
	if c.nc.Drain() == nil {
		select {
		case <-c.closed:
		case <-time.After(30 * time.Second): // a drain that hangs: count what came
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// callKind names a message's kind: "api CONSUMER.INFO", "direct get",
// "ack", "kv registry", "publish inbox", "delivery kv registry" (a push
// consumer's, which the server sends on the stored message's subject with
// an ack reply), "reply"…
func callKind(subj, reply string) string {
	t := strings.Split(subj, ".")
	var k string
	switch {
	case strings.HasPrefix(subj, "$JS.API.DIRECT.GET."):
		k = "direct get"
	case strings.HasPrefix(subj, "$JS.API.") && len(t) >= 3:
		k = "api " + strings.Join(t[2:min(4, len(t))], ".")
	case strings.HasPrefix(subj, "$JS.ACK."):
		k = "ack"
	case strings.HasPrefix(subj, "$KV.") && len(t) >= 2:
		k = "kv " + t[1][strings.LastIndex(t[1], "_")+1:]
	case strings.HasPrefix(subj, "agentteam.") && len(t) >= 3:
		k = "publish " + t[2]
	case strings.HasPrefix(subj, "_INBOX."):
		k = "reply"
	default:
		k = "other " + t[0]
	}
	if strings.HasPrefix(reply, "$JS.ACK.") {
		k = "delivery " + strings.TrimPrefix(k, "publish ")
	}
	return k
}

// printCalls prints a count, most first, per model turn.
func printCalls(n map[string]int, turns int) {
	kinds := slices.Collect(maps.Keys(n))
	slices.SortFunc(kinds, func(a, b string) int { return n[b] - n[a] })
	total := 0
	for _, k := range kinds {
		total += n[k]
	}
	per := float64(max(turns, 1))
	fmt.Printf("  messages through the server (counted by one more client): %d, %.1f a model turn\n", total, float64(total)/per)
	for _, k := range kinds {
		fmt.Printf("    %-24s %8d  %6.2f a turn\n", k, n[k], float64(n[k])/per)
	}
}
