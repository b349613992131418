//go:build !unix

package team

import "os"

// ProcessAlive reports whether a process with this pid exists.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}
