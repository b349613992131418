package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve turns a model-given path into an absolute path inside the
// workspace. Relative paths are taken from the root; absolute paths are
// accepted only if they lie inside it. Symlinks are followed for every part
// that exists, so a link that leads out is refused; the part that does not
// exist yet (a file about to be written) is joined lexically.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(w.Root, p)
	}
	if !w.within(abs) {
		return "", fmt.Errorf("path %q is outside the workspace", p)
	}
	// Resolve symlinks on the longest existing prefix.
	existing, rest := abs, ""
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	full := filepath.Join(real, rest)
	if !w.within(full) {
		return "", fmt.Errorf("path %q leads outside the workspace", p)
	}
	return full, nil
}

// IsState reports whether an absolute path lies in .agentteam/, which the
// file tools may read but must not write (it would corrupt inboxes). The
// path is cleaned, and its first component below the root compared without
// regard to case: on macOS and Windows .AGENTTEAM is the same directory.
func (w *Workspace) IsState(abs string) bool {
	rel, ok := w.relative(abs)
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return ok && strings.EqualFold(first, StateDir)
}

func (w *Workspace) within(abs string) bool {
	_, ok := w.relative(abs)
	return ok
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
