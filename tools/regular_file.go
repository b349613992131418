package tools

import (
	"errors"
	"io/fs"

	"github.com/agentteam/agentteam/workspace"
)

// checkRegular refuses a mode unless it is a regular file's.
func checkRegular(m fs.FileMode) error {
	if !m.IsRegular() {
		return &workspace.NotRegularError{Mode: m}
	}
	return nil
}

// isDir reports whether err refuses a directory, which each tool words its own way.
func isDir(err error) bool {
	var nr *workspace.NotRegularError
	return errors.As(err, &nr) && nr.Mode.IsDir()
}

// checkReplaceable refuses to write over the file unless it is missing
// or a regular file: a rename would silently swap a FIFO, socket or
// device for a plain file. A stat opens nothing, so it cannot block.
func checkReplaceable(pl *workspace.Place) error {
	m, err := pl.Mode()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkRegular(m)
}

// refusal renders an error about the file at path (as the model gave it):
// a refusal of its type, or else "cannot <verb> path: err".
func refusal(path, verb string, err error) Result {
	if nr := (*workspace.NotRegularError)(nil); errors.As(err, &nr) {
		return Errorf("%s %v; file tools read and write regular files only", path, nr)
	}
	return Errorf("cannot %s %s: %v", verb, path, err)
}
