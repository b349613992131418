//go:build !unix

package tools

import "os/exec"

// killGroupOnCancel keeps exec's default (kill the shell only) where
// process groups do not exist.
func killGroupOnCancel(cmd *exec.Cmd) {}
