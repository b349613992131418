package board

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentteam/agentteam/internal/store/storetest"
)

// boardDoc is the board's read-modify-write as the contract names it.
type boardDoc struct{ b *Board }

func (d boardDoc) Read(ctx context.Context) (File, error) { return d.b.Read(ctx) }
func (d boardDoc) Update(ctx context.Context, fn func(*File) error) (File, error) {
	return d.b.update(ctx, fn)
}

// The task board keeps the compare-and-set document contract that every
// store behind a team must keep.
func TestTaskBoardKeepsTheDocContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks", "board.json")
	storetest.RunDoc(t, storetest.DocOpener[File]{
		Open:  func(t *testing.T) storetest.Doc[File] { return boardDoc{New(path)} },
		Inc:   func(f *File) { f.NextID++ },
		Count: func(f File) int { return f.NextID },
	})
}
