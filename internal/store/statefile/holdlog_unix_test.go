//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package statefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// HoldLog locks the log itself: another opener's flock of the log waits
// while it is held, no lock file is made, and an append through the held
// descriptor lands in the log.
func TestHoldLogFlocksTheLogItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	h, err := HoldLog(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AppendLine([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if tryFlock(t, path) {
		t.Error("another opener took the log's flock while HoldLog held it")
	}
	h.Unlock()
	if !tryFlock(t, path) {
		t.Error("the flock is still held after unlock")
	}
	if _, err := os.Lstat(path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a lock file was made: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "one\n" {
		t.Errorf("log holds %q", data)
	}
}

// Without create a missing log is fs.ErrNotExist and nothing is made.
func TestHoldLogWithoutCreateMakesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if _, err := HoldLog(path, false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("HoldLog of a missing log: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the log was made: %v", err)
	}
}

// A log replaced (renamed over) or removed and made anew between two holds
// is locked, and written, on the file the path names now; the kept
// descriptor of the old one is not used.
func TestHoldLogFollowsAReplacedLog(t *testing.T) {
	for _, how := range []string{"renamed over", "removed"} {
		t.Run(how, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			h, err := HoldLog(path, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.AppendLine([]byte("old")); err != nil {
				t.Fatal(err)
			}
			h.Unlock()
			old, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			if how == "removed" {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(path+".new", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
			h, err = HoldLog(path, true)
			if err != nil {
				t.Fatal(err)
			}
			if tryFlock(t, path) {
				t.Error("another opener took the new log's flock while HoldLog held it")
			}
			if err := h.AppendLine([]byte("new")); err != nil {
				t.Fatal(err)
			}
			h.Unlock()
			if data, _ := os.ReadFile(path); string(data) != "new\n" {
				t.Errorf("the log now holds %q, want only the new line", data)
			}
			fi, _ := old.Stat()
			if fi.Size() != int64(len("old\n")) {
				t.Errorf("the replaced log grew to %d bytes", fi.Size())
			}
		})
	}
}

// A link at the log's path is refused, even a dangling one (which an
// O_CREAT open would create through), and so is a FIFO, without waiting
// for a peer.
func TestHoldLogRefusesLinksAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "outside")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := HoldLog(link, true); !errors.Is(err, ErrSymlink) {
		t.Errorf("HoldLog of a link: %v, want ErrSymlink", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("HoldLog created %s through the link", target)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, create := range []bool{true, false} {
		if _, err := HoldLog(fifo, create); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
			t.Errorf("HoldLog of a FIFO: %v, want ErrNotRegular naming it", err)
		}
	}
	// With a reader at the other end the open itself succeeds: the check of
	// what was opened refuses it.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := HoldLog(fifo, true); !errors.Is(err, ErrNotRegular) {
		t.Errorf("HoldLog of a FIFO with a reader: %v, want ErrNotRegular", err)
	}
	if _, err := ReadFile(fifo, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v, want ErrNotRegular", err)
	}
}

// Attributes set through a held log are read back through the hold, an
// open file and the path; a missing one is ErrNoAttr, one longer than the
// buffer ErrAttrTooLong.
func TestHeldLogAttributes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	h, err := HoldLog(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock()
	var buf [16]byte
	_, err = h.Attr("user.test", buf[:])
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no extended attributes here: %v", err)
	}
	if !errors.Is(err, ErrNoAttr) {
		t.Fatalf("a missing attribute: %v, want ErrNoAttr", err)
	}
	if err := h.SetAttr("user.test", []byte("12 34")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for what, get := range map[string]func([]byte) (int, error){
		"held": func(b []byte) (int, error) { return h.Attr("user.test", b) },
		"file": func(b []byte) (int, error) { return FileAttr(f, "user.test", b) },
		"path": func(b []byte) (int, error) { return LinkAttr(path, "user.test", b) },
	} {
		if n, err := get(buf[:]); err != nil || string(buf[:n]) != "12 34" {
			t.Errorf("%s: %q, %v", what, buf[:n], err)
		}
		if _, err := get(buf[:2]); !errors.Is(err, ErrAttrTooLong) {
			t.Errorf("%s into a short buffer: %v, want ErrAttrTooLong", what, err)
		}
	}
	if err := h.RemoveAttr("user.test"); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveAttr("user.test"); err != nil {
		t.Errorf("removing a missing attribute: %v", err)
	}
	if _, err := LinkAttr(path, "user.test", buf[:]); !errors.Is(err, ErrNoAttr) {
		t.Errorf("after removal: %v, want ErrNoAttr", err)
	}
}
