//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// procAttr starts a hook in a process group of its own, so that its
// timeout ends everything it started.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the hook's process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
