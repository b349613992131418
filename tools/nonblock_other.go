//go:build !unix

package tools

// oNonblock is nothing where the platform has no such flag.
const oNonblock = 0
