//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// hide masks each path in this mount namespace: a directory by an empty
// read-only tmpfs, anything else by /dev/null bound read-only, so the
// command reads nothing of it by that path or any other (the mount covers
// the file, not the name). A path that is not there, or that the person
// cannot reach anyway, is skipped; one that holds a directory in keep
// (the command's own) is refused, and so is one the kernel will not mask:
// the command does not run then.
func hide(paths, keep []string) error {
	for _, path := range paths {
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.ENOTDIR):
			continue
		case err != nil:
			return fmt.Errorf("cannot hide %s: %w", path, err)
		}
		for _, k := range keep {
			if within(k, path) {
				return fmt.Errorf("cannot hide %s: the command's directory %s is inside it", path, k)
			}
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		} else if err = unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err == nil {
			err = remount(path, unix.MS_RDONLY)
		}
		if err != nil {
			return fmt.Errorf("cannot hide %s: %w", path, err)
		}
	}
	return nil
}
