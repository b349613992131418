package statefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrSymlink is wrapped by the error for a state file that is a symbolic
// link. State files are opened without following a link at their last
// component, so a checked-out .agentteam/ whose inbox links to ~/.bashrc
// cannot make agentteam write (or read) there.
var ErrSymlink = errors.New("state file is a symbolic link")

// ErrNotRegular is wrapped by the error for a state file that is a
// directory or anything else but a regular file.
var ErrNotRegular = errors.New("state file is not a regular file")

// LinkError refuses a state file that is a symbolic link; it wraps ErrSymlink.
type LinkError struct{ Path string }

func (e *LinkError) Error() string {
	return e.Path + " is a symbolic link; agentteam keeps its state only in real files: remove it"
}

func (e *LinkError) Unwrap() error { return ErrSymlink }

// NotRegularError refuses a state file that is a directory or a device; it
// wraps ErrNotRegular.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	if e.Mode.IsDir() {
		what = "a directory"
	}
	return fmt.Sprintf("%s is %s; agentteam keeps its state only in regular files: move it away", e.Path, what)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Open opens path like os.OpenFile, but refuses a symbolic link at its
// last component (O_NOFOLLOW) and anything but a regular file, each with a
// sentence naming path (a *LinkError or a *NotRegularError).
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := OpenStat(path, flag, perm)
	return f, err
}

// OpenStat is Open that also returns what it learnt of the file, so a
// reader that needs its size asks the kernel once.
func OpenStat(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	if oNoFollow == 0 {
		// No O_NOFOLLOW on this system: look first, which leaves a race
		// but refuses a link checked out with the repository.
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, &LinkError{path}
		}
	}
	f, err := openFile(path, flag|oNoFollow, perm)
	if err != nil {
		return nil, nil, linkRefusal(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{path, fi.Mode()}
	}
	return f, fi, nil
}

// CheckRegular refuses fi, the Lstat of path, unless it is a regular file.
func CheckRegular(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &LinkError{path}
	case !fi.Mode().IsRegular():
		return &NotRegularError{path, fi.Mode()}
	}
	return nil
}

// Refusal returns the refusal of a state file in err's chain (a link, a
// directory), which is a sentence of its own, or nil.
func Refusal(err error) error {
	var le *LinkError
	var nr *NotRegularError
	switch {
	case errors.As(err, &le):
		return le
	case errors.As(err, &nr):
		return nr
	}
	return nil
}

// linkRefusal turns the error of an open with O_NOFOLLOW of a symbolic
// link (ELOOP on Linux, EMLINK or EFTYPE on some BSDs) into a sentence
// naming path, and that of a failed open of what is no regular file (a
// directory opened for writing, a FIFO without a reader) into another;
// other errors pass unchanged. A missing file needs no look.
func linkRefusal(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || Refusal(err) != nil {
		return err
	}
	fi, lerr := os.Lstat(path)
	switch {
	case lerr != nil:
	case fi.Mode()&fs.ModeSymlink != 0:
		return &LinkError{path}
	case !fi.Mode().IsRegular():
		return &NotRegularError{path, fi.Mode()}
	}
	return err
}

// ReadFile reads a small state file, at most limit bytes of it, refusing a
// link or a directory as Open does; a missing file is fs.ErrNotExist.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// ErrNoAttr is the error of an extended attribute a file does not have.
var ErrNoAttr = errors.New("no such extended attribute")

// ErrAttrTooLong is wrapped by the error of an extended attribute longer
// than the buffer given for it.
var ErrAttrTooLong = errors.New("extended attribute too long")

// errNotHeld is the error of an attribute call on a log whose descriptor
// is not open (a Held that is not a HoldLog).
var errNotHeld = errors.New("the file is not held open by its own lock")

// FileAttr reads the extended attribute name of the open file f into buf
// and returns its length; errors as Held.Attr's.
func FileAttr(f *os.File, name string, buf []byte) (int, error) {
	return fdAttr(int(f.Fd()), f.Name(), name, buf)
}

// FileID tells one file from another (device and inode): a path renamed
// over, or removed and made anew, names a file with another. The zero
// FileID is a file not told apart (off the unix systems).
type FileID struct{ dev, ino uint64 }
