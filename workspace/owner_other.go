//go:build !unix

package workspace

import "io/fs"

// ownedByMe: off the unix systems a file's owner is not told apart.
func ownedByMe(fs.FileInfo) bool { return true }
