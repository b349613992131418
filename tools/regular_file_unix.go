//go:build unix

package tools

import (
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens abs, a path Resolve returned (so no link is left in it),
// for reading, and refuses anything but a regular file. O_NONBLOCK keeps the
// open of a FIFO from waiting for a writer; the type is checked on the
// opened descriptor, so a file swapped in meanwhile cannot slip through.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	fd, err := syscall.Open(abs, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): name it by its type.
		if fi, lerr := os.Lstat(abs); lerr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &notRegularError{fi.Mode()}
		}
		return nil, nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	f := os.NewFile(uintptr(fd), abs)
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(fi)
	}
	if err == nil {
		// Reads of a regular file never wait; clear the flag all the same.
		err = syscall.SetNonblock(fd, false)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
