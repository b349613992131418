package workspace

import (
	"path/filepath"
	"strings"
)

// IsState reports whether an absolute path lies in .agentteam/, which the
// file tools may read but must not write (it would corrupt inboxes). The
// path is cleaned, and its first component below the root compared without
// regard to case: on macOS and Windows .AGENTTEAM is the same directory.
func (w *Workspace) IsState(abs string) bool {
	rel, ok := w.relative(abs)
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return ok && strings.EqualFold(first, StateDir)
}

// relative is abs cleaned and made relative to the root ("." for the root
// itself); ok is false when abs lies outside the workspace.
func (w *Workspace) relative(abs string) (rel string, ok bool) {
	rel, err := filepath.Rel(w.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}
