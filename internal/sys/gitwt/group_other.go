//go:build !unix

package gitwt

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error { return nil }
