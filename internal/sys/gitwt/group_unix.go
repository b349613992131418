//go:build unix

package gitwt

import (
	"os/exec"
	"syscall"
)

// ownGroup puts git in a process group of its own and kills that whole
// group when ctx ends, so a program git started cannot outlive the call.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills what is left of git's group: a child git started and
// that stayed behind (sleep 60 &) keeps the group, and so its id, alive.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
