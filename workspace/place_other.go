//go:build !unix

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Place is a file a model named, links in the workspace followed.
// Without openat each step goes by the path Place found: a link swapped
// in between can still lead a step elsewhere.
type Place struct {
	abs string
}

// Place finds the file p names, links resolved; a link leading out is refused.
func (w *Workspace) Place(p string) (*Place, error) {
	rel, err := w.lexical(p)
	if err != nil {
		return nil, err
	}
	// Resolve links on the longest existing prefix.
	existing, rest := filepath.Join(w.Root, rel), ""
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("path %q: %w", p, err)
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
		return nil, fmt.Errorf("path %q: %w", p, err)
	}
	full := filepath.Join(real, rest)
	if _, ok := w.relative(full); !ok {
		return nil, leadsOut(p)
	}
	return &Place{abs: full}, nil
}

// Abs is the file's absolute path, links resolved.
func (p *Place) Abs() string { return p.abs }

// Close does nothing here: no directory is held open.
func (p *Place) Close() error { return nil }

// Mode is the file's type and permission bits.
func (p *Place) Mode() (fs.FileMode, error) {
	fi, err := os.Lstat(p.abs)
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}

// OpenRegular opens the file for reading and refuses anything but a
// regular file. Without unix FIFOs and device nodes, an open cannot block.
func (p *Place) OpenRegular() (*os.File, fs.FileInfo, error) {
	f, err := os.Open(p.abs)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenDir opens the directory the path names, for listing.
func (p *Place) OpenDir() (*os.File, error) { return os.Open(p.abs) }

// MakeDirs makes the file's missing directories.
func (p *Place) MakeDirs(perm fs.FileMode) error {
	return os.MkdirAll(filepath.Dir(p.abs), perm)
}

// WriteAtomic replaces the file with data: temp file, fsync, rename.
func (p *Place) WriteAtomic(data []byte, perm fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(p.abs), filepath.Base(p.abs)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p.abs)
}
