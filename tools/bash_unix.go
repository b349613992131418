//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs the command in its own process group and kills the
// whole group on cancel, so children like `sleep 30 &` die with the shell.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
