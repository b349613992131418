//go:build !unix

package inbox

import (
	"io"
	"os"
)

// lockFileFlag is flock's own default here.
func lockFileFlag() int { return os.O_CREATE | os.O_RDONLY }

// writeLine opens path for appending, writes line in one call and closes it.
func writeLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n, err := f.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
