package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
			abs, err := writableTarget(ctx, ws, gate, WriteFileName, a.Path)
			if err != nil {
				return Errorf("%v", err), nil
			}
			switch err := checkReplaceable(abs); {
			case isDir(err):
				return Errorf("%s is a directory; give a file path", a.Path), nil
			case err != nil:
				return refusal(a.Path, "write", err), nil
			}
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return Errorf("cannot create the directory for %s: %v", a.Path, err), nil
			}
			if err := writeAtomic(abs, []byte(a.Content)); err != nil {
				return Errorf("cannot write %s: %v", a.Path, err), nil
			}
			return Text(sprintf("Wrote %d bytes to %s.", len(a.Content), a.Path)), nil
		})
}

// writableTarget makes the checks of both write tools before they touch a
// file: the gate is open, the call is not canceled, and the path lies in
// the workspace but outside .agentteam/. The error is a refusal for the model.
func writableTarget(ctx context.Context, ws *workspace.Workspace, gate WriteGate, tool, p string) (string, error) {
	if why := writeRefusal(gate); why != "" {
		return "", errors.New(why)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s was canceled (%v)", tool, err)
	}
	abs, err := ws.Resolve(p)
	if err != nil {
		return "", err
	}
	if ws.IsState(abs) {
		return "", fmt.Errorf("%s is inside %s/, which holds agentteam's own state and cannot be written by tools", p, workspace.StateDir)
	}
	return abs, nil
}
