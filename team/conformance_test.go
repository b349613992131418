package team

import (
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/internal/storetest"
)

// The registry keeps the compare-and-set document contract that every store
// behind a team must keep (the task board runs it in team/board, the bare
// document in internal/statefile).
func TestRegistryKeepsTheDocContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team", "config.json")
	storetest.RunDoc(t, storetest.DocOpener[Config]{
		Open: func(t *testing.T) storetest.Doc[Config] { return NewRegistry(path, "") },
		Inc: func(c *Config) {
			i := c.Find("counter")
			if i < 0 {
				c.Teammates = append(c.Teammates, Member{Name: "counter"})
				i = len(c.Teammates) - 1
			}
			c.Teammates[i].Turns++
		},
		Count: func(c Config) int {
			if i := c.Find("counter"); i >= 0 {
				return c.Teammates[i].Turns
			}
			return 0
		},
	})
}
