//go:build !unix

package hooks

import (
	"os/exec"
	"syscall"
)

// procAttr: elsewhere a hook's timeout ends the hook alone.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
