package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentteam/agentteam/inbox"
)

// errNoChange lets an update function decline to write.
var errNoChange = errors.New("no change")

// document is what a lockedDoc holds: it can copy itself deeply (so a
// cached value is never shared) and count a change.
type document[T any] interface {
	clone() T
	changed()
}

// lockedDoc is one JSON file that is only changed by read-modify-write under
// a lock other processes respect, and replaced whole, so no update is lost
// and no reader sees half a file. The registry and the task board are such
// files. It keeps the last version this process read or wrote and skips
// the parse while the file on disk is that same file.
type lockedDoc[T document[T]] struct {
	path  string
	what  string   // "registry", "task board": for error sentences
	empty func() T // the document of a missing file

	mu       sync.Mutex
	cached   T
	cachedFI os.FileInfo
}

// read returns the document as it is on disk; a missing file is empty().
func (d *lockedDoc[T]) read() (T, error) {
	fi, err := os.Stat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return d.empty(), nil
	}
	if err != nil {
		return d.empty(), fmt.Errorf("read %s: %w", d.what, err)
	}
	d.mu.Lock()
	if d.cachedFI != nil && sameVersion(fi, d.cachedFI) {
		v := d.cached.clone()
		d.mu.Unlock()
		return v, nil
	}
	d.mu.Unlock()
	data, err := os.ReadFile(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return d.empty(), nil
	}
	if err != nil {
		return d.empty(), fmt.Errorf("read %s: %w", d.what, err)
	}
	v := d.empty()
	if err := json.Unmarshal(data, &v); err != nil {
		return d.empty(), fmt.Errorf("%s %s is not valid JSON (%v); fix or remove it", d.what, d.path, err)
	}
	d.remember(v, fi)
	return v, nil
}

// update applies fn under the lock and writes the result once, counting the
// change; errNoChange from fn writes nothing.
func (d *lockedDoc[T]) update(fn func(*T) error) (T, error) {
	if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
		return d.empty(), fmt.Errorf("create %s directory: %w", d.what, err)
	}
	unlock, err := inbox.Lock(d.path)
	if err != nil {
		return d.empty(), fmt.Errorf("lock %s: %w", d.what, err)
	}
	defer unlock()
	v, err := d.read()
	if err != nil {
		return v, err
	}
	if err := fn(&v); err != nil {
		if errors.Is(err, errNoChange) {
			return v, nil
		}
		return v, err
	}
	v.changed()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return v, fmt.Errorf("encode %s: %w", d.what, err)
	}
	if err := inbox.ReplaceFile(d.path, append(data, '\n'), 0o644); err != nil {
		return v, fmt.Errorf("write %s: %w", d.what, err)
	}
	if fi, err := os.Stat(d.path); err == nil {
		d.remember(v, fi)
	}
	return v, nil
}

func (d *lockedDoc[T]) remember(v T, fi os.FileInfo) {
	d.mu.Lock()
	d.cached, d.cachedFI = v.clone(), fi
	d.mu.Unlock()
}

// sameVersion: every write renames a new file into place, so the same file
// (device and inode) with the same size and time is the same version.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
