package tools

import (
	"errors"
	"io/fs"
	"os"

	"github.com/agentteam/agentteam/internal/statefile"
)

// writeAtomic replaces path with data so a reader never sees half a file
// (statefile.WriteFileAtomic: temp file, fsync, rename). An existing file keeps
// its permission bits.
func writeAtomic(path string, data []byte) error {
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return statefile.WriteFileAtomic(path, data, perm)
}
