package permgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// classified is a tool call as the permission policy sees it, with what
// a person reads of it.
type classified struct {
	permission.Call
	args string // the call's arguments as given
	diff string // the unified diff a write would make ("" for other calls)
	// refused is the tool's own refusal of a path that names no file it
	// may read or write, when classify is not ok.
	refused string
}

// what is the call in a few words: "bash `go test ./...`", "write_file docs/a.md".
func (c classified) what() string {
	switch c.Kind {
	case permission.Exec:
		return fmt.Sprintf("%s `%s`", c.Tool, event.FirstLine(c.Subject, 200))
	case permission.Write:
		return c.Tool + " " + c.Subject
	}
	if c.Subject != "" {
		return c.Tool + " " + c.Subject
	}
	return c.Tool
}

// maxDiffInput bounds the files a diff is made of.
const maxDiffInput = 1 << 20

// classify reads a call's arguments the way its tool will; ok is false
// when they do not parse, so the tool refuses them itself, or name a path
// the tool would refuse now (refused says why).
func classify(ws *workspace.Workspace, root, tool string, raw json.RawMessage) (classified, bool) {
	c := classified{Call: permission.Call{Tool: tool, Kind: permission.Read}, args: string(raw)}
	switch tool {
	case tools.BashName:
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(raw, &a) != nil {
			return c, false
		}
		c.Kind, c.Subject = permission.Exec, a.Command
	case tools.WriteFileName, tools.EditFileName, tools.ReadFileName:
		var a struct {
			Path    string  `json:"path"`
			Content string  `json:"content"`
			OldText *string `json:"old_text"`
			NewText string  `json:"new_text"`
		}
		if json.Unmarshal(raw, &a) != nil {
			return c, false
		}
		place := tools.PlaceWritable
		if tool == tools.ReadFileName {
			place = (*workspace.Workspace).Place
		}
		pl, err := place(ws, a.Path)
		if err != nil {
			// Refused here, not left to the tool: a link swapped before
			// the tool looks would let it run unasked.
			c.refused = err.Error()
			return c, false
		}
		defer pl.Close()
		abs := pl.Abs()
		rel, err := filepath.Rel(ws.Root, abs)
		if err != nil {
			return c, false
		}
		c.Subject = filepath.ToSlash(rel)
		if tool == tools.ReadFileName {
			return c, true
		}
		c.Kind = permission.Write
		c.InRoot = within(root, abs)
		// A file that is not a regular one is still asked about: its type
		// can change before the tool runs.
		old, exists, hidden := readForDiff(pl)
		switch {
		case hidden != "":
			c.diff = fmt.Sprintf("(%s: not shown, %s)", c.Subject, hidden)
		case tool == tools.WriteFileName:
			c.diff = unified(c.Subject, old, a.Content, exists)
		case a.OldText != nil && *a.OldText != "" && strings.Count(old, *a.OldText) == 1:
			c.diff = unified(c.Subject, old, strings.Replace(old, *a.OldText, a.NewText, 1), exists)
		}
	}
	return c, true
}

// readForDiff reads the file a write would change: its text and whether
// it exists, or why no diff can be shown. Anything but a regular file is
// opened without waiting and left unread.
func readForDiff(pl *workspace.Place) (text string, exists bool, hidden string) {
	f, _, err := pl.OpenRegular()
	var nr *workspace.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, ""
	case errors.As(err, &nr):
		return "", true, "it " + nr.Error()
	case err != nil:
		return "", true, "the file cannot be read"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiffInput+1))
	if err != nil || len(data) > maxDiffInput || bytes.IndexByte(data, 0) >= 0 {
		return "", true, fmt.Sprintf("the file is binary or larger than %d bytes", maxDiffInput)
	}
	return string(data), true, ""
}

// unified is the diff from old to new of path, as git shows it.
func unified(path, old, new string, exists bool) string {
	from := "a/" + path
	if !exists {
		from = "/dev/null"
	}
	d := udiff.Unified(from, "b/"+path, old, new)
	if d == "" {
		return fmt.Sprintf("(%s: no change)", path)
	}
	return d
}

// within reports whether abs lies in root (or is root).
func within(root, abs string) bool {
	rel, err := filepath.Rel(root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// headlessHint is the refusal of an ask nobody can answer: what would
// allow the call.
func headlessHint(c classified, v permission.Verdict) string {
	rule := permission.Suggest(c.Call).String()
	s := fmt.Sprintf("permission denied: %s needs approval (%s) and nobody can answer here.", c.what(), v.Why)
	if v.Entry != nil {
		return s + fmt.Sprintf(" To let it run, remove the ask rule %s, or run with --permission-delegate user and answer with `agentteam approve`.", v.Entry.Rule)
	}
	s += fmt.Sprintf(" To allow it, run with --allow '%s' (or a pattern such as '%s'), or add that rule to allow under [permissions] in .agentteam/config.toml (then agentteam trust)", rule, patternHint(c))
	if c.Kind == permission.Write {
		s += ", or use --permission-mode auto-edit"
	} else {
		s += ", or use --permission-mode yolo"
	}
	return s + "; with --permission-delegate user, `agentteam approve` answers from another terminal."
}

// patternHint widens the suggested rule: a command's first word, a file's directory.
func patternHint(c classified) string {
	if c.Kind == permission.Exec {
		first, _, _ := strings.Cut(strings.TrimSpace(c.Subject), " ")
		return c.Tool + "(" + first + " *)"
	}
	dir := filepath.ToSlash(filepath.Dir(c.Subject))
	if dir == "." {
		return c.Tool + "(*)"
	}
	return c.Tool + "(" + dir + "/**)"
}
