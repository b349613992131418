package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// notRegularError refuses a path that is not a regular file: a FIFO would
// block the call forever, and a device or socket holds no text to read.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("is %s, not a regular file; file tools read and write regular files only", kindOf(e.mode))
}

// kindOf names a file's type for the model.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "a special file"
	}
}

// checkRegular refuses fi unless it is a regular file.
func checkRegular(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &notRegularError{fi.Mode()}
	}
	return nil
}

// isDir reports whether err refuses a directory, which each tool words its own way.
func isDir(err error) bool {
	var nr *notRegularError
	return errors.As(err, &nr) && nr.mode.IsDir()
}

// checkReplaceable refuses to write over abs unless it is missing or a
// regular file: a rename would silently swap a FIFO, socket or device for a
// plain file. Lstat opens nothing, so it cannot block.
func checkReplaceable(abs string) error {
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkRegular(fi)
}

// refusal renders an error about the file at path (as the model gave it):
// a refusal of its type, or else "cannot <verb> path: err".
func refusal(path, verb string, err error) Result {
	if nr := (*notRegularError)(nil); errors.As(err, &nr) {
		return Errorf("%s %v", path, nr)
	}
	return Errorf("cannot %s %s: %v", verb, path, err)
}
