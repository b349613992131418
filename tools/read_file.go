package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/agentteam/agentteam/workspace"
)

type readFileArgs struct {
	Path string `json:"path" description:"File path, relative to the workspace root (or absolute inside it)."`
}

// newReadFile reads files in ws, keeping at most outputCap bytes of one.
// Reading changes nothing, so it is parallel.
func newReadFile(ws *workspace.Workspace, outputCap int) Tool {
	return newTool(ReadFileName,
		"Read a text file in the workspace and return its content. Very long files are cut in the middle; use bash (sed -n, grep) for parts.",
		func(ctx context.Context, a readFileArgs) (Result, error) {
			if ws == nil {
				return Result{}, errors.New("no workspace configured")
			}
			if err := ctx.Err(); err != nil {
				return Errorf("read_file was canceled (%v)", err), nil
			}
			pl, err := ws.Place(a.Path)
			if err != nil {
				return Errorf("%v", err), nil
			}
			defer pl.Close()
			f, fi, err := pl.OpenRegular()
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return Errorf("file %s does not exist", a.Path), nil
			case isDir(err):
				return Errorf("%s is a directory, not a file; list it with bash (ls)", a.Path), nil
			case err != nil:
				return refusal(a.Path, "open", err), nil
			}
			defer f.Close()
			head, tail, cut, err := readCapped(f, fi.Size(), outputCap)
			if err != nil {
				return Errorf("cannot read %s: %v", a.Path, err), nil
			}
			if bytes.IndexByte(head, 0) >= 0 || bytes.IndexByte(tail, 0) >= 0 {
				return Errorf("%s is a binary file (it contains NUL bytes); inspect it with bash (file, xxd)", a.Path), nil
			}
			if len(head)+len(tail) == 0 {
				return Text(sprintf("(%s is empty)", a.Path)), nil
			}
			return Text(joinCut(head, tail, cut)), nil
		}, parallel)
}

// readCapped reads a whole file of up to limit bytes, or else its first and
// last limit/2 bytes, never holding more than limit in memory.
func readCapped(f *os.File, size int64, limit int) (head, tail []byte, cut int64, err error) {
	if size <= int64(limit) {
		// Read to EOF, not size bytes: a pseudo-file reports size 0.
		b, err := io.ReadAll(io.LimitReader(f, int64(limit)))
		return b, nil, 0, err
	}
	h := limit / 2
	t := limit - h
	head = make([]byte, h)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, 0, fmt.Errorf("read head: %w", err)
	}
	head = head[:n]
	tail = make([]byte, t)
	n, err = f.ReadAt(tail, size-int64(t))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, 0, fmt.Errorf("read tail: %w", err)
	}
	tail = tail[:n]
	return head, tail, size - int64(h) - int64(t), nil
}
