//go:build !linux

package mcp

import "syscall"

// serverProcAttr: elsewhere the server is ended by Close alone.
func serverProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
