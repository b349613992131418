package team

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/storetest"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/tasks"
)

// The registry keeps the compare-and-set document contract that every store
// behind a team must keep (the task board runs it in team/board, the bare
// document in internal/store/statefile).
func TestRegistryKeepsTheDocContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team", "config.json")
	storetest.RunDoc(t, storetest.DocOpener[registry.Config]{
		Open: func(t *testing.T) storetest.Doc[registry.Config] { return registryDoc{registry.NewRegistry(path, "")} },
		Inc: func(c *registry.Config) {
			i := c.Find("counter")
			if i < 0 {
				c.Teammates = append(c.Teammates, registry.Member{Name: "counter"})
				i = len(c.Teammates) - 1
			}
			c.Teammates[i].Turns++
		},
		Count: func(c registry.Config) int {
			if i := c.Find("counter"); i >= 0 {
				return c.Teammates[i].Turns
			}
			return 0
		},
	})
}

// registryDoc is the registry as the contract names it: the suite's Update
// is a Change, made on a copy of its own (Change wants a fn that fails
// before it changes anything, and the suite's may fail after) and the
// result read inside it.
type registryDoc struct{ r RegistryDoc }

func (d registryDoc) Read(ctx context.Context) (registry.Config, error) { return d.r.Read(ctx) }
func (d registryDoc) Update(ctx context.Context, fn func(*registry.Config) error) (registry.Config, error) {
	var out registry.Config
	err := d.r.Change(ctx, func(c *registry.Config) error {
		next := c.Clone()
		if err := fn(next); err != nil {
			return err
		}
		*c, out = *next, *next.Clone()
		return nil
	})
	return out, err
}

// A store behind a team, written for team's interfaces, also runs the
// conformance suite: the method sets hold the suite's.
var (
	_ storetest.Mailbox              = Mailbox(nil)
	_ storetest.Doc[registry.Config] = registryDoc{}
	_ Mailbox                        = (*inbox.Store)(nil)
	_ RegistryDoc                    = (*registry.Registry)(nil)
	_ tasks.Doc                      = (*board.Board)(nil)
	_ EventSink                      = (*event.EventLog)(nil)
)

// The event log keeps the event log contract: appends from many goroutines
// and instances are all there, each line whole (a long one too).
func TestEventLogKeepsTheEventLogContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	long := strings.Repeat("x", 3000) // longer than an atomic pipe write
	storetest.RunEventLog(t, storetest.EventLogOpener{
		Open: func(t *testing.T) func(int) {
			log := event.NewEventLog(path, nil)
			return func(n int) { log.Emit(event.Event{Agent: "alice", Payload: event.Reply{Text: long, Turn: n}}) }
		},
		Read: func(t *testing.T) ([]int, error) {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			var got []int
			for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				var e event.Event
				if err := json.Unmarshal(line, &e); err != nil {
					return got, fmt.Errorf("line %d: %w", len(got)+1, err)
				}
				r, ok := e.Payload.(event.Reply)
				if !ok || r.Text != long {
					return got, fmt.Errorf("line %d is not the event written: %+v", len(got)+1, e)
				}
				got = append(got, r.Turn)
			}
			return got, nil
		},
	})
}
