// Package sandbox runs the model's shell commands confined. On Linux each
// command runs under a fresh init process of agentteam's own binary (see
// Init) in new user, PID and mount namespaces, and optionally a network
// namespace: it sees only its own processes (a fresh /proc), every process
// it starts ends with it, and Landlock lets it read everywhere but write
// only where its Policy says. What a person's own tools later run from the
// repository it works in (git's hooks and config) stays read-only to it,
// and the credentials its Policy hides read as empty. Elsewhere, and where
// the kernel refuses, Check says why and the caller falls back to running
// commands plainly.
package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Policy is what one sandboxed command may do.
type Policy struct {
	// Dir is where the command starts: the agent's root (workspace or
	// worktree), writable unless ReadOnly.
	Dir string
	// Writable are more directories the command may write: its temp dir,
	// and what the person configured.
	Writable []string
	// Protect are directories and files that stay read-only even inside
	// Dir (the team's own .agentteam state), except a writable directory
	// inside them. The git repository Dir lies in is guarded besides,
	// always: its config, hooks and info, and a worktree's .git file.
	Protect []string
	// Hidden are files and directories the command cannot read: each is
	// masked by an empty read-only one (credentials: ~/.ssh, the NATS
	// creds file). Missing ones are skipped; one that cannot be masked
	// fails the command.
	Hidden []string
	// ReadOnly gives the command no write access at all (a plan-mode
	// teammate before approval): only /dev/null and the like.
	ReadOnly bool
	// Network false runs the command in a network namespace of its own,
	// with no interface up, and denies TCP through Landlock too.
	Network bool
	// Env is the command's whole environment (see Environ).
	Env []string
}

// Mode says whether commands must, may or must not be sandboxed.
type Mode string

// The modes of --sandbox.
const (
	ModeAuto     Mode = "auto"     // sandbox where the kernel can, say so once where it cannot
	ModeRequired Mode = "required" // refuse to start where the kernel cannot
	ModeOff      Mode = "off"      // run commands plainly
)

// ParseMode reads a --sandbox value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeAuto, ModeRequired, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("%q is not a sandbox mode: use auto, required or off", s)
}

// ParseNetwork reads a --sandbox-network value: on or off.
func ParseNetwork(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a sandbox network setting: use on or off", s)
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
