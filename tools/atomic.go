package tools

import (
	"errors"
	"io/fs"

	"github.com/agentteam/agentteam/workspace"
)

// writeAtomic replaces the file with data so a reader never sees half a
// file (temp file, fsync, rename, all in the directory Place holds open).
// An existing file keeps its permission bits.
func writeAtomic(pl *workspace.Place, data []byte) error {
	perm := fs.FileMode(0o644)
	if m, err := pl.Mode(); err == nil && m.IsRegular() {
		perm = m.Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return pl.WriteAtomic(data, perm)
}
