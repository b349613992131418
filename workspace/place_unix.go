//go:build unix

package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A Place is a file a model named, reached beneath the workspace's root:
// the directory that holds it is open, and every later step (stat, open,
// create, rename) is by the file's name in that directory. A link swapped
// in after Place returns cannot lead the step elsewhere, and no link ever
// leads above the root (links are read, not followed by the kernel, so
// /proc's magic links are never taken).
//
// Place follows links inside the workspace, relative or absolute, as the
// model would expect; a directory that does not exist yet is remembered
// and made by MakeDirs. Close it when done.
type Place struct {
	root    string
	dir     int      // the deepest directory of the path that exists
	rel     []string // dir's real path from the root
	pending []string // directories below dir still to be made
	name    string   // the file's name ("." when the path names a directory's self)
}

// openFlags are every open's: no link followed by the kernel, no wait on a FIFO.
const openFlags = unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK

// frame is one directory of the walk, open.
type frame struct {
	fd   int
	name string
}

// Place finds the file p names, one component at a time from the root:
// each directory is opened by its name in the one before, without
// following links; a link is read and its target walked in its stead.
// The error is a sentence for the model.
func (w *Workspace) Place(p string) (*Place, error) {
	rel, err := w.lexical(p)
	if err != nil {
		return nil, err
	}
	rootFd, err := unix.Open(w.Root, unix.O_RDONLY|unix.O_DIRECTORY|openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.Root, err)
	}
	stack := []frame{{fd: rootFd}}
	defer func() {
		for _, f := range stack {
			if f.fd >= 0 {
				unix.Close(f.fd)
			}
		}
	}()
	// reset goes back to the root, for a link with an absolute target.
	reset := func() {
		for _, f := range stack[1:] {
			unix.Close(f.fd)
		}
		stack = stack[:1]
	}
	parts := split(rel)
	links := 0
	for len(parts) > 0 {
		c := parts[0]
		parts = parts[1:]
		top := stack[len(stack)-1]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return nil, leadsOut(p)
			}
			unix.Close(top.fd)
			stack = stack[:len(stack)-1]
			continue
		}
		var st unix.Stat_t
		err := unix.Fstatat(top.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT):
			pending, err := plainNames(p, parts)
			if err != nil {
				return nil, err
			}
			if len(pending) == 0 {
				return w.place(&stack, c, nil), nil
			}
			return w.place(&stack, pending[len(pending)-1], append([]string{c}, pending[:len(pending)-1]...)), nil
		case err != nil:
			return nil, fmt.Errorf("path %q: %w", p, err)
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			if links++; links > maxLinks {
				return nil, fmt.Errorf("path %q goes through too many symbolic links", p)
			}
			target, err := readlinkat(top.fd, c)
			if errors.Is(err, unix.EINVAL) {
				// Not a link any more: look again.
				parts = append([]string{c}, parts...)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", p, err)
			}
			if filepath.IsAbs(target) {
				in, ok := w.relative(filepath.Clean(target))
				if !ok {
					return nil, leadsOut(p)
				}
				reset()
				target = in
			}
			parts = append(split(target), parts...)
		case len(parts) == 0:
			return w.place(&stack, c, nil), nil
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return nil, fmt.Errorf("path %q: %s is not a directory", p, filepath.Join(append(names(stack), c)...))
		default:
			fd, err := unix.Openat(top.fd, c, unix.O_RDONLY|unix.O_DIRECTORY|openFlags, 0)
			if swapped(err) {
				// A link or a file now, or gone: look again.
				if links++; links > maxLinks {
					return nil, fmt.Errorf("path %q: %w", p, err)
				}
				parts = append([]string{c}, parts...)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", p, err)
			}
			stack = append(stack, frame{fd: fd, name: c})
		}
	}
	// The path names a directory by "." or "..", a link's target's last word.
	return w.place(&stack, ".", nil), nil
}

// swapped reports whether an open of what a stat found a directory failed
// because it is no longer one (O_NOFOLLOW on a link: ELOOP, or EMLINK on
// FreeBSD).
func swapped(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT)
}

// place takes the top of the walk's stack for the Place it returns.
func (w *Workspace) place(stack *[]frame, name string, pending []string) *Place {
	s := *stack
	top := len(s) - 1
	pl := &Place{root: w.Root, dir: s[top].fd, rel: names(s), pending: pending, name: name}
	s[top].fd = -1
	return pl
}

// plainNames checks the names of directories that do not exist yet: a
// ".." below one of them names nothing.
func plainNames(p string, parts []string) ([]string, error) {
	var out []string
	for _, c := range parts {
		switch c {
		case "", ".":
		case "..":
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

func names(stack []frame) []string {
	var out []string
	for _, f := range stack[1:] {
		out = append(out, f.name)
	}
	return out
}

func split(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

func readlinkat(dir int, name string) (string, error) {
	for size := 256; size <= 1<<16; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			if n == 0 {
				return "", unix.ENOENT
			}
			return string(buf[:n]), nil
		}
	}
	return "", unix.ENAMETOOLONG
}

// Abs is the file's absolute path, links resolved, as it was found.
func (p *Place) Abs() string {
	parts := append([]string{p.root}, p.rel...)
	parts = append(parts, p.pending...)
	return filepath.Join(append(parts, p.name)...)
}

// Close lets go of the directory.
func (p *Place) Close() error {
	if p.dir < 0 {
		return nil
	}
	err := unix.Close(p.dir)
	p.dir = -1
	return err
}

// notExist is the error of a step on a file whose directory is not made yet.
func (p *Place) notExist(op string) error {
	return &fs.PathError{Op: op, Path: p.Abs(), Err: fs.ErrNotExist}
}

// Mode is the file's type and permission bits, of a link itself if the
// name is one now.
func (p *Place) Mode() (fs.FileMode, error) {
	if len(p.pending) > 0 {
		return 0, p.notExist("lstat")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p.dir, p.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: p.Abs(), Err: err}
	}
	return fileMode(uint32(st.Mode)), nil
}

// OpenRegular opens the file for reading and refuses anything but a
// regular file (a *NotRegularError). It never waits: a FIFO is opened
// without blocking, found to be one and closed unread.
func (p *Place) OpenRegular() (*os.File, fs.FileInfo, error) {
	if len(p.pending) > 0 {
		return nil, nil, p.notExist("open")
	}
	fd, err := unix.Openat(p.dir, p.name, unix.O_RDONLY|openFlags, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO), a link not without
		// following it: name either by its type.
		if m, merr := p.Mode(); merr == nil && !m.IsRegular() {
			return nil, nil, &NotRegularError{m}
		}
		return nil, nil, &fs.PathError{Op: "open", Path: p.Abs(), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "stat", Path: p.Abs(), Err: err}
	}
	if m := fileMode(uint32(st.Mode)); !m.IsRegular() {
		unix.Close(fd)
		return nil, nil, &NotRegularError{m}
	}
	// Reads of a regular file never wait; clear the flag all the same.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "open", Path: p.Abs(), Err: err}
	}
	f := os.NewFile(uintptr(fd), p.Abs())
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenDir opens the directory the path names, for listing.
func (p *Place) OpenDir() (*os.File, error) {
	if len(p.pending) > 0 {
		return nil, p.notExist("open")
	}
	fd, err := unix.Openat(p.dir, p.name, unix.O_RDONLY|unix.O_DIRECTORY|openFlags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p.Abs(), Err: err}
	}
	return os.NewFile(uintptr(fd), p.Abs()), nil
}

// MakeDirs makes the directories the path names that do not exist yet,
// each in the one before, and keeps the last open.
func (p *Place) MakeDirs(perm fs.FileMode) error {
	for len(p.pending) > 0 {
		c := p.pending[0]
		if err := unix.Mkdirat(p.dir, c, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "mkdir", Path: p.Abs(), Err: err}
		}
		fd, err := unix.Openat(p.dir, c, unix.O_RDONLY|unix.O_DIRECTORY|openFlags, 0)
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: p.Abs(), Err: err}
		}
		unix.Close(p.dir)
		p.dir, p.rel, p.pending = fd, append(p.rel, c), p.pending[1:]
	}
	return nil
}

// WriteAtomic replaces the file with data so a reader never sees half of
// it: a temp file in the same directory, fsync, rename, fsync of the
// directory, each by name in the directory held open.
func (p *Place) WriteAtomic(data []byte, perm fs.FileMode) (err error) {
	if len(p.pending) > 0 {
		return p.notExist("write")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := p.name + ".tmp-" + hex.EncodeToString(b[:])
	fd, err := unix.Openat(p.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|openFlags, 0o600)
	if err != nil {
		return &fs.PathError{Op: "write", Path: p.Abs(), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = unix.Unlinkat(p.dir, tmp, 0)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = unix.Renameat(p.dir, tmp, p.dir, p.name); err != nil {
		return &fs.PathError{Op: "rename", Path: p.Abs(), Err: err}
	}
	// Best effort: some filesystems refuse fsync on a directory.
	_ = unix.Fsync(p.dir)
	return nil
}

// fileMode is a stat's mode as Go names it.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
