package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// Extended attributes, on Linux: user.* attributes of a regular file,
// which ext4, xfs, btrfs, tmpfs (Linux 6.6 on) and overlayfs keep. Where
// a file system keeps none the calls say so (errors.ErrUnsupported).

func fdAttr(fd int, path, name string, buf []byte) (int, error) {
	var n int
	err := retryEINTR(func() (err error) {
		n, err = unix.Fgetxattr(fd, name, buf)
		return err
	})
	if err != nil {
		return 0, attrError("getxattr", path, name, err)
	}
	return n, nil
}

func fdSetAttr(fd int, path, name string, value []byte) error {
	err := retryEINTR(func() error { return unix.Fsetxattr(fd, name, value, 0) })
	if err != nil {
		return attrError("setxattr", path, name, err)
	}
	return nil
}

func fdRemoveAttr(fd int, path, name string) error {
	err := retryEINTR(func() error { return unix.Fremovexattr(fd, name) })
	if err != nil && !errors.Is(err, unix.ENODATA) {
		return attrError("removexattr", path, name, err)
	}
	return nil
}

// LinkAttr reads the extended attribute name of path, a link not followed,
// into buf and returns its length; errors as Held.Attr's.
func LinkAttr(path, name string, buf []byte) (int, error) {
	var n int
	err := retryEINTR(func() (err error) {
		n, err = unix.Lgetxattr(path, name, buf)
		return err
	})
	if err != nil {
		return 0, attrError("getxattr", path, name, err)
	}
	return n, nil
}

func attrError(op, path, name string, err error) error {
	switch {
	case errors.Is(err, unix.ENODATA):
		return ErrNoAttr
	case errors.Is(err, unix.ERANGE) || errors.Is(err, unix.E2BIG):
		return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s: %w", name, ErrAttrTooLong)}
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP):
		return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s: %w", name, errors.ErrUnsupported)}
	}
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s: %w", name, err)}
}
