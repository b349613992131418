//go:build unix

package tools

import "syscall"

// oNonblock opens a file without waiting on a FIFO.
const oNonblock = syscall.O_NONBLOCK
