package team

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/pool"
	"github.com/agentteam/agentteam/team/registry"
)

// queueRoom refuses a spawn on a team with a work queue when max spawns
// already wait for a worker to take them (--max-queue, as the pool bounds
// one process's queue): the registry, changed by compare-and-set, counts
// them for every process that spawns.
func queueRoom(c *registry.Config, name string, max int) error {
	waiting := 0
	for _, m := range c.Teammates {
		if m.Name != name && m.Status == registry.StatusQueued && m.Worker == "" && !m.Ended {
			waiting++
		}
	}
	if waiting >= max {
		return fmt.Errorf("%w: %d spawns already wait for a worker to take them (--max-queue %d)", pool.ErrQueueFull, waiting, max)
	}
	return nil
}

// WorkerPlace is, shortly, where a worker runs a teammate: its id, and
// "@HOST" unless the id names the host already (the default HOST-PID).
// Both come from the registry, which any worker writes: each is cut to 24
// bytes and shown without control characters.
func WorkerPlace(worker, host string) string {
	shown := func(s string) string {
		return event.FirstLine(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == 0x7f {
				return '?'
			}
			return r
		}, s), 24)
	}
	worker, host = shown(worker), shown(host)
	if host == "" || strings.HasPrefix(worker, host) {
		return worker
	}
	return worker + "@" + host
}
