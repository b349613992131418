// Package testfs makes the hostile file systems the tests attack with: a
// disk that fills up, a file outside the workspace that must stay as it
// is, links where state should be. For tests only.
package testfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OutsideFile is a file outside the workspace, as ~/.bashrc would be; the
// returned check fails the test unless it is byte-for-byte unchanged.
func OutsideFile(t testing.TB) (path string, unchanged func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), ".bashrc")
	const content = "export PATH=$HOME/bin:$PATH\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Errorf("the file outside was changed: %q, %v", got, err)
		}
	}
}

// Symlink makes link point at target, creating link's directory.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// WantLinkRefused checks that err refuses path as a symbolic link (wrapping
// sentinel) in a sentence naming it.
func WantLinkRefused(t testing.TB, what string, err, sentinel error, path string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s through a symbolic link %s succeeded", what, path)
		return
	}
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), path+" is a symbolic link") {
		t.Errorf("%s: error %q, want one saying %s is a symbolic link", what, err, path)
	}
}

// NoPanic runs fn and turns a panic into a test failure.
func NoPanic(t testing.TB, what string, fn func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked on a full disk: %v", what, r)
		}
	}()
	return fn()
}

// WriteFile writes text to path, making its directory; empty text writes
// nothing (a file the test leaves out).
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if text == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
