package tools

import (
	"bytes"
	"io"
	"slices"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentteam/agentteam/workspace"
)

// personRun are files in a work tree that the person's own tools run
// later (a shell's direnv, an editor, make, npm, a hook framework, CI): a
// command may write them inside the sandbox, so each such write is shown
// as a diff, in the tool call's event and the TUI, and said to the model.
var personRun = []string{
	".envrc", ".vscode/settings.json", ".vscode/tasks.json", ".vscode/launch.json",
	"Makefile", "GNUmakefile", "makefile", "justfile", "Taskfile.yml",
	"package.json", ".npmrc", ".yarnrc.yml", ".pre-commit-config.yaml", "lefthook.yml",
	".cargo/config.toml", ".mise.toml", ".tool-versions", "go.work",
	"setup.py", "conftest.py", "tox.ini", "Dockerfile", "docker-compose.yml", "compose.yaml", ".gitlab-ci.yml",
}

// personRunDirs are directories whose every file is such a file.
var personRunDirs = []string{".github/workflows"}

// maxWatched bounds one watched file's bytes read for the diff.
const maxWatched = 256 << 10

// watched is what the person-run files of a root held: content by path
// relative to the root; a file too large or not regular is held as nil.
type watched map[string][]byte

// watch reads the person-run files of ws as they are now, through
// workspace.Place: no link out of the workspace followed (a directory
// linked to ~/.ssh is read as nothing), no FIFO waited on.
func watch(ws *workspace.Workspace) watched {
	w := watched{}
	if ws == nil {
		return w
	}
	names := slices.Clone(personRun)
	for _, d := range personRunDirs {
		pl, err := ws.Place(d)
		if err != nil {
			continue
		}
		if f, err := pl.OpenDir(); err == nil {
			if ents, err := f.ReadDir(-1); err == nil {
				for _, e := range ents {
					names = append(names, d+"/"+e.Name())
				}
			}
			f.Close()
		}
		pl.Close()
	}
	for _, n := range names {
		pl, err := ws.Place(n)
		if err != nil {
			w[n] = nil // there, but a link out of the workspace: changes show, not its text
			continue
		}
		if _, err := pl.Mode(); err == nil {
			w[n] = readWatched(pl)
		}
		pl.Close()
	}
	return w
}

// readWatched is the file's text, or nil when it is not a small regular file.
func readWatched(pl *workspace.Place) []byte {
	f, fi, err := pl.OpenRegular()
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > maxWatched {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxWatched+1))
	if err != nil || len(b) > maxWatched {
		return nil
	}
	return b
}

// changed is what a command did to the person-run files of ws since
// before: the changed names, and their diffs.
func (before watched) changed(ws *workspace.Workspace) (names []string, diff string) {
	after := watch(ws)
	var b strings.Builder
	for _, n := range sortedNames(before, after) {
		old, had := before[n]
		cur, has := after[n]
		if had == has && bytes.Equal(old, cur) {
			continue
		}
		names = append(names, n)
		from, to := "a/"+n, "b/"+n
		if !had {
			from = "/dev/null"
		}
		if !has {
			to = "/dev/null"
		}
		switch {
		case (had && old == nil) || (has && cur == nil) || bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(cur, 0) >= 0:
			b.WriteString(sprintf("(%s: changed; diff not shown, the file is binary, not a regular file, or larger than %d bytes)\n", n, maxWatched))
		default:
			b.WriteString(udiff.Unified(from, to, string(old), string(cur)))
		}
	}
	return names, clipDiff(b.String(), maxDiffOutput)
}

func sortedNames(a, b watched) []string {
	var out []string
	for n := range a {
		out = append(out, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
