package tools

import (
	"context"
	"encoding/json"
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

type writeFile struct{ env Env }

func (writeFile) Name() string { return WriteFileName }

func (writeFile) Description() string {
	return "Create a file or replace its whole content. For a small change to an existing file, prefer edit_file."
}

func (writeFile) Params() any { return writeFileArgs{} }

func (t writeFile) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a writeFileArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Workspace == nil {
		return Result{}, errors.New("no workspace configured")
	}
	if why := t.env.writeRefusal(); why != "" {
		return Errorf("%s", why), nil
	}
	if err := ctx.Err(); err != nil {
		return Errorf("write_file was canceled (%v)", err), nil
	}
	abs, err := resolveWritable(t.env.Workspace, a.Path)
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
}

// resolveWritable confines p to the workspace and keeps the write tools
// out of .agentteam/; the error is a refusal for the model.
func resolveWritable(ws *workspace.Workspace, p string) (string, error) {
	abs, err := ws.Resolve(p)
	if err != nil {
		return "", err
	}
	if ws.IsState(abs) {
		return "", fmt.Errorf("%s is inside %s/, which holds agentteam's own state and cannot be written by tools", p, workspace.StateDir)
	}
	return abs, nil
}
