//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Once Place has found a file, a link swapped in for one of its
// directories changes nothing: every step goes by the directory held open.
func TestPlaceStepsDoNotLookThePathUpAgain(t *testing.T) {
	ws := openTemp(t)
	outside := t.TempDir()
	sub := filepath.Join(ws.Root, "sub")
	mustWrite(t, filepath.Join(sub, "old.txt"))
	pl, err := ws.Place("sub/new/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	// sub is moved aside and a link out put in its place.
	if err := os.Rename(sub, filepath.Join(ws.Root, "aside")); err != nil {
		t.Fatal(err)
	}
	mustLink(t, outside, sub)
	if err := pl.MakeDirs(0o755); err != nil {
		t.Fatal(err)
	}
	if err := pl.WriteAtomic([]byte("hello\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(ws.Root, "aside", "new", "f.txt"))
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("the write did not land where Place found the file: %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(ws.Root, "aside", "new", "f.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v (%v), want 0640", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something landed outside: %v", entries)
	}
}

// A FIFO is opened without waiting and refused by its type; a missing
// file and a missing directory are fs.ErrNotExist.
func TestPlaceOpenRegular(t *testing.T) {
	ws := openTemp(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(ws.Root, "a.txt"))
	var nr *NotRegularError
	if _, _, err := ws.OpenRegular("pipe"); !errors.As(err, &nr) || nr.Error() != "is a named pipe (FIFO), not a regular file" {
		t.Errorf("FIFO: %v", err)
	}
	if _, _, err := ws.OpenRegular("."); !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Errorf("root: %v", err)
	}
	for _, p := range []string{"nope.txt", "no/dir/f.txt"} {
		if _, _, err := ws.OpenRegular(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want not exist", p, err)
		}
	}
	f, fi, err := ws.OpenRegular("a.txt")
	if err != nil || fi.Size() != 1 {
		t.Fatalf("a.txt: %v, %v", fi, err)
	}
	f.Close()
}
