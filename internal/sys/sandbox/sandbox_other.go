//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

var errNotLinux = errors.New("commands are sandboxed only on Linux")

// Command runs argv plainly: Check refuses the sandbox here, so callers
// never get this far with it on.
func Command(ctx context.Context, p Policy, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = p.Dir, p.Env
	return cmd
}

// Check says why commands cannot be sandboxed here.
func Check(ctx context.Context, network bool) error { return errNotLinux }

// ABI is 0: there is no Landlock here.
func ABI() int { return 0 }

// Init does nothing where there is no sandbox.
func Init() {}
