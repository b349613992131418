package team

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/internal/storetest"
)

// The registry and the task board keep the compare-and-set document
// contract that every store behind a team must keep.
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

// boardDoc is the board's read-modify-write as the contract names it.
type boardDoc struct{ b *Board }

func (d boardDoc) Read() (BoardFile, error) { return d.b.Read() }
func (d boardDoc) Update(fn func(*BoardFile) error) (BoardFile, error) {
	return d.b.update(context.Background(), fn)
}

func TestTaskBoardKeepsTheDocContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks", "board.json")
	storetest.RunDoc(t, storetest.DocOpener[BoardFile]{
		Open:  func(t *testing.T) storetest.Doc[BoardFile] { return boardDoc{NewBoard(path)} },
		Inc:   func(f *BoardFile) { f.NextID++ },
		Count: func(f BoardFile) int { return f.NextID },
	})
}
