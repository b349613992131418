//go:build !unix

package tools

import (
	"io/fs"
	"os"
)

// openRegular opens abs for reading and refuses anything but a regular
// file. Without unix FIFOs and device nodes in the workspace, a plain open
// cannot block.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
