package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside refuses a path or link that leads out of the workspace.
var ErrOutside = errors.New("leads outside the workspace")

// lexical confines p as written: it is made relative to the root and
// cleaned, and refused if it names something outside.
func (w *Workspace) lexical(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(w.Root, p)
	}
	rel, ok := w.relative(abs)
	if !ok {
		return "", fmt.Errorf("path %q is outside the workspace", p)
	}
	return rel, nil
}

// leadsOut is the refusal of p when a link in it leads out.
func leadsOut(p string) error {
	return fmt.Errorf("path %q %w", p, ErrOutside)
}

// Resolve turns a model-given path into an absolute path inside the
// workspace, links inside it followed; a path or link leading out is
// refused. The path names what was there at the time: to open or write
// the file, use Place, which does not look the path up again.
func (w *Workspace) Resolve(p string) (string, error) {
	pl, err := w.Place(p)
	if err != nil {
		return "", err
	}
	defer pl.Close()
	return pl.Abs(), nil
}

// OpenRegular opens the regular file a model named, for reading, beneath
// the root; see Place.OpenRegular.
func (w *Workspace) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	pl, err := w.Place(p)
	if err != nil {
		return nil, nil, err
	}
	defer pl.Close()
	return pl.OpenRegular()
}

// NotRegularError refuses a file that is not a regular file: a FIFO would
// block a read forever, and a device or socket holds no text.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("is %s, not a regular file", KindOf(e.Mode))
}

// KindOf names a file's type for the model.
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
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

// maxLinks bounds the links one path may go through, as the kernel does.
const maxLinks = 40
