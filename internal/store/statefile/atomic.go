package statefile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// WriteFileAtomic replaces path with data so that a reader sees either the old
// or the new file, never a part: temp file in the same dir, fsync, rename,
// then fsync of the dir so the rename itself survives a crash.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Best effort: some filesystems refuse fsync on a directory.
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// ReplaceFile replaces path with data through a fixed temp name and a
// rename: a reader sees the old or the new file, never a part. The caller
// must hold Lock(path), which makes the fixed temp name safe. Unlike
// WriteFileAtomic it does not fsync: the file survives a crash of the
// process, and what it holds (a read position, statuses) is rebuilt or
// re-delivered without loss if a power cut takes the last write back.
// Each version gets a modification time of its own, to the nanosecond, so
// that (file, size, mtime) tells versions apart for readers that cache a
// parse: the kernel's coarse clock, and an inode number freed by one
// rename and reused by the next, could otherwise make two versions look alike.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := writeNew(tmp, data, perm); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// lastStamp is the last modification time ReplaceFile gave, in Unix nanoseconds.
var lastStamp atomic.Int64

// uniqueStamp is now, or just after the last stamp given if the clock has not moved.
func uniqueStamp() time.Time {
	for {
		last := lastStamp.Load()
		now := max(time.Now().UnixNano(), last+1)
		if lastStamp.CompareAndSwap(last, now) {
			return time.Unix(0, now)
		}
	}
}
