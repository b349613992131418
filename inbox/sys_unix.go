//go:build unix

package inbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
	"syscall"
)

// lockFileFlag opens lock files with O_NONBLOCK, which changes nothing for a
// regular file or flock(2) but spares os.OpenFile four fcntl calls.
func lockFileFlag() int {
	switch runtime.GOOS {
	case "aix", "solaris", "illumos":
		return os.O_CREATE | os.O_RDWR | syscall.O_NONBLOCK // no exclusive lock on a read-only file
	}
	return os.O_CREATE | os.O_RDONLY | syscall.O_NONBLOCK
}

// writeLine opens path for appending, writes line in one write(2) and closes
// it. Raw syscalls on purpose: os.OpenFile tries to register a regular file
// with the poller, five more syscalls per open, on the hot path.
func writeLine(path string, line []byte) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_APPEND|syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var n int
	err = retryEINTR(func() (err error) {
		n, err = syscall.Write(fd, line)
		return err
	})
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil && n > 0 {
		// A torn tail would glue itself to the next line; the caller holds the
		// lock, so cutting our own bytes off again is safe.
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil {
			_ = syscall.Ftruncate(fd, st.Size-int64(n))
		}
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
