//go:build !linux

package statefile

import (
	"errors"
	"fmt"
	"io/fs"
)

// Off Linux no extended attribute is used: callers keep what they would
// put there in a file instead.

func fdAttr(fd int, path, name string, buf []byte) (int, error) {
	return 0, unsupportedAttr("getxattr", path, name)
}

func fdSetAttr(fd int, path, name string, value []byte) error {
	return unsupportedAttr("setxattr", path, name)
}

func fdRemoveAttr(fd int, path, name string) error {
	return unsupportedAttr("removexattr", path, name)
}

// LinkAttr reads the extended attribute name of path; off Linux, none is kept.
func LinkAttr(path, name string, buf []byte) (int, error) {
	return 0, unsupportedAttr("getxattr", path, name)
}

func unsupportedAttr(op, path, name string) error {
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s: %w", name, errors.ErrUnsupported)}
}
