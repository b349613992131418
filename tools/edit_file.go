package tools

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/agentteam/agentteam/workspace"
)

type editFileArgs struct {
	Path    string `json:"path" description:"Path of an existing file, relative to the workspace root (or absolute inside it)."`
	OldText string `json:"old_text" description:"Exact text to replace, including whitespace; it must occur exactly once in the file, so include enough surrounding lines."`
	NewText string `json:"new_text" description:"Text to put in its place (may be empty to delete)."`
}

// newEditFile edits files in ws, outside .agentteam/, while gate is open.
func newEditFile(ws *workspace.Workspace, gate WriteGate) Tool {
	return newTool(EditFileName,
		"Replace exactly one occurrence of old_text with new_text in an existing file. "+
			"Fails without changing the file if old_text occurs zero or several times.",
		func(ctx context.Context, a editFileArgs) (Result, error) {
			if a.OldText == "" {
				return Errorf("argument \"old_text\" must not be empty; use write_file to create or replace a whole file"), nil
			}
			if ws == nil {
				return Result{}, errors.New("no workspace configured")
			}
			pl, err := writableTarget(ctx, ws, gate, EditFileName, a.Path)
			if err != nil {
				return Errorf("%v", err), nil
			}
			defer pl.Close()
			data, err := readRegular(pl)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return Errorf("file %s does not exist; use write_file to create it", a.Path), nil
			case isDir(err):
				return Errorf("%s is a directory, not a file", a.Path), nil
			case err != nil:
				return refusal(a.Path, "read", err), nil
			}
			if bytes.IndexByte(data, 0) >= 0 {
				return Errorf("%s is a binary file (it contains NUL bytes) and cannot be edited as text", a.Path), nil
			}
			text := string(data)
			switch n := strings.Count(text, a.OldText); n {
			case 1:
			case 0:
				return Errorf("old_text was not found in %s (0 occurrences); read the file and copy the text exactly", a.Path), nil
			default:
				return Errorf("old_text occurs %d times in %s; include more surrounding text so it matches exactly once", n, a.Path), nil
			}
			updated := strings.Replace(text, a.OldText, a.NewText, 1)
			if err := writeAtomic(pl, []byte(updated)); err != nil {
				return Errorf("cannot write %s: %v", a.Path, err), nil
			}
			res := Text(sprintf("Replaced 1 occurrence in %s (%d bytes now).", a.Path, len(updated)))
			res.Diff = writeDiff(ws, pl.Abs(), data, []byte(updated), true, true)
			return res, nil
		})
}

// readRegular reads a whole regular file without blocking on anything else.
func readRegular(pl *workspace.Place) ([]byte, error) {
	f, _, err := pl.OpenRegular()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
