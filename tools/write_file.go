package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentteam/agentteam/workspace"
)

type writeFileArgs struct {
	Path    string `json:"path" description:"File path, relative to the workspace root (or absolute inside it). Missing parent directories are created."`
	Content string `json:"content" description:"The complete new content of the file."`
}

// newWriteFile writes files in ws, outside .agentteam/, while gate is open.
func newWriteFile(ws *workspace.Workspace, gate WriteGate) Tool {
	return newTool(WriteFileName,
		"Create a file or replace its whole content. For a small change to an existing file, prefer edit_file.",
		func(ctx context.Context, a writeFileArgs) (Result, error) {
			if ws == nil {
				return Result{}, errors.New("no workspace configured")
			}
			pl, err := writableTarget(ctx, ws, gate, WriteFileName, a.Path)
			if err != nil {
				return Errorf("%v", err), nil
			}
			defer pl.Close()
			switch err := checkReplaceable(pl); {
			case isDir(err):
				return Errorf("%s is a directory; give a file path", a.Path), nil
			case err != nil:
				return refusal(a.Path, "write", err), nil
			}
			if err := pl.MakeDirs(0o755); err != nil {
				return Errorf("cannot create the directory for %s: %v", a.Path, err), nil
			}
			old, existed, readable := readBefore(pl)
			if err := writeAtomic(pl, []byte(a.Content)); err != nil {
				return Errorf("cannot write %s: %v", a.Path, err), nil
			}
			res := Text(sprintf("Wrote %d bytes to %s.", len(a.Content), a.Path))
			res.Diff = writeDiff(ws, pl.Abs(), old, []byte(a.Content), existed, readable)
			return res, nil
		})
}

// Bounds of the diff a write reports (Result.Diff): a file larger than
// maxDiffInput, before or after, is not diffed, and a longer diff than
// maxDiffOutput is cut at a line, saying how much was left out.
const (
	maxDiffInput  = 1 << 20
	maxDiffOutput = 32 << 10
)

// readBefore reads the file a write is about to replace: its content,
// whether it existed, and whether it could be read whole for a diff.
func readBefore(pl *workspace.Place) (data []byte, existed, readable bool) {
	f, _, err := pl.OpenRegular()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, true
	}
	if err != nil {
		return nil, true, false
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxDiffInput+1))
	return data, true, err == nil && len(data) <= maxDiffInput
}

// writeDiff is the unified diff from old to new of the file at abs, as git
// shows it (paths relative to the workspace), bounded; or a sentence
// saying why there is none to show.
func writeDiff(ws *workspace.Workspace, abs string, old, new []byte, existed, readable bool) string {
	path := abs
	if rel, err := filepath.Rel(ws.Root, abs); err == nil {
		path = filepath.ToSlash(rel)
	}
	switch {
	case !readable || len(old) > maxDiffInput || len(new) > maxDiffInput:
		return sprintf("(%s: diff not shown, the file could not be read or is larger than %d bytes)", path, maxDiffInput)
	case bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(new, 0) >= 0:
		return sprintf("(%s: diff not shown, the file is binary)", path)
	}
	from := "a/" + path
	if !existed {
		from = "/dev/null"
	}
	d := udiff.Unified(from, "b/"+path, string(old), string(new))
	if d == "" {
		return sprintf("(%s: no change)", path)
	}
	return clipDiff(d, maxDiffOutput)
}

// clipDiff cuts d to at most max bytes at a line's end, and says how many
// lines and bytes were cut.
func clipDiff(d string, max int) string {
	if len(d) <= max {
		return d
	}
	cut := strings.LastIndexByte(d[:max], '\n') + 1
	rest := d[cut:]
	lines := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		lines++
	}
	return d[:cut] + sprintf("[diff cut: %d more lines (%d bytes) not shown]\n", lines, len(rest))
}

// writableTarget makes the checks of both write tools before they touch a
// file: the gate is open, the call is not canceled, and PlaceWritable
// takes the path. The error is a refusal for the model; the caller
// closes the Place.
func writableTarget(ctx context.Context, ws *workspace.Workspace, gate WriteGate, tool, p string) (*workspace.Place, error) {
	if why := writeRefusal(gate); why != "" {
		return nil, errors.New(why)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s was canceled (%v)", tool, err)
	}
	return PlaceWritable(ws, p)
}

// PlaceWritable is the file a write tool would change at p: in the
// workspace, links followed, but outside .agentteam/ and any .git. The
// error is the refusal the model reads; the caller closes the Place.
func PlaceWritable(ws *workspace.Workspace, p string) (*workspace.Place, error) {
	pl, err := ws.Place(p)
	if err != nil {
		return nil, err
	}
	if ws.IsState(pl.Abs()) {
		pl.Close()
		return nil, fmt.Errorf("%s is inside %s/, which holds agentteam's own state and cannot be written by tools", p, workspace.StateDir)
	}
	if inGitDir(ws.Root, pl.Abs()) {
		pl.Close()
		return nil, fmt.Errorf("%s is git's own (.git): the file tools do not write there, where a hook or config would run in the person's next git command; use git in bash", p)
	}
	return pl, nil
}

// inGitDir reports whether abs, a resolved path in the workspace at root,
// is a .git (a repository's directory, a worktree's file) or inside one,
// in any case: macOS and Windows take .GIT for .git.
func inGitDir(root, abs string) bool {
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return false
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}
