package mcp

import "syscall"

// serverProcAttr starts a stdio server in a process group of its own that
// the kernel ends with agentteam, however agentteam ends.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
