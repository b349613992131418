//go:build !linux

package agentsmd

import "io/fs"

// identity is what changes when the file is written or replaced.
func identity(fi fs.FileInfo) fileID {
	return fileID{size: fi.Size(), mtime: fi.ModTime()}
}
