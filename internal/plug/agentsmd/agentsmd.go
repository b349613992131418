// Package agentsmd reads the instructions people write down for agents:
// the person's own AGENTS.md in agentteam's config directory, then, in
// each directory from the repository's top (its git root) down to where
// an agent works, that directory's AGENTS.md, root first and nearest
// last, as Codex does. In a directory AGENTS.override.md wins over
// AGENTS.md, and the configured fallbacks (CLAUDE.md, CRUSH.md…) are
// tried after both; the first that holds text is the directory's.
//
// Guarantees:
//   - a file is reached through workspace.Place beneath the repository's
//     top: no link leads out of it, a FIFO is never waited on, and anything
//     but a regular file is skipped with one sentence (Set.Notes);
//   - at most MaxBytes are read of a file and given to the model in all;
//     the text cut short ends with a sentence that says so;
//   - a file that is not UTF-8 is skipped with one sentence;
//   - Load stats each file and reads it again only when it changed.
package agentsmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentteam/agentteam/workspace"
)

// The names every directory is looked in for, before the fallbacks.
const (
	Name         = "AGENTS.md"
	OverrideName = "AGENTS.override.md"
)

// DefaultMaxBytes bounds the instructions of one agent, all files together
// (Codex's project_doc_max_bytes).
const DefaultMaxBytes = 32 << 10

// Options say where to look and how much to take.
type Options struct {
	// Fallbacks are more names to look for in each directory, after
	// AGENTS.override.md and AGENTS.md ([context] files, which
	// config.CheckContextFile has checked are plain markdown names).
	Fallbacks []string
	// MaxBytes bounds the text taken from all files together; 0 is DefaultMaxBytes.
	MaxBytes int
	// UserDir holds the person's own AGENTS.md (~/.config/agentteam); "" none.
	UserDir string
	// Home, when set, is written ~ in the paths shown.
	Home string
}

// File is one file whose text an agent is given.
type File struct {
	// Path is where it is, absolute (~ for the home directory).
	Path string
	// Name is its base name: AGENTS.md, CLAUDE.md…
	Name string
	// Text is what the agent is given of it.
	Text string
	// Cut: the cap left out the rest of it.
	Cut bool
}

// Set is what one agent is given.
type Set struct {
	Files []File
	// Notes are one sentence for each file skipped, and for the cut.
	Notes []string
	// Text is the section of the system prompt; "" when no file holds text.
	Text string
}

// Summary names the files by name and count, as a status line shows them:
// "AGENTS.md ×2, CLAUDE.md"; "" for none.
func (s Set) Summary() string {
	var names []string
	count := map[string]int{}
	for _, f := range s.Files {
		if count[f.Name] == 0 {
			names = append(names, f.Name)
		}
		count[f.Name]++
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n
		if count[n] > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", n, count[n])
		}
	}
	return strings.Join(parts, ", ")
}

// Key tells two sets apart: the same files with the same text.
func (s Set) Key() string { return s.Text + "\x00" + strings.Join(s.Notes, "\x00") }

// Loader reads the files, keeping what it read of each until it changes.
// It is safe for concurrent use: every agent of a process shares one.
type Loader struct {
	opts  Options
	names []string

	mu    sync.Mutex
	cache map[string]cached // by absolute path
}

// cached is a file as read: its identity when read, and its bytes (at
// most MaxBytes+1) or the sentence that skipped it.
type cached struct {
	id   fileID
	data []byte
	note string
	// racy: the file changed so shortly before it was read that a write
	// just after could leave the same size and times; it is read again.
	racy bool
}

// fileID changes when the file is written or replaced.
type fileID struct {
	size         int64
	mtime, ctime time.Time
	ino, dev     uint64
}

// racyWindow is how recent a change must be for a file to be read again
// at the next Load whatever its times say: the kernel's clock ticks coarser
// than its timestamps show.
const racyWindow = 2 * time.Second

// New makes a loader.
func New(opts Options) *Loader {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	names := []string{OverrideName, Name}
	for _, n := range opts.Fallbacks {
		if n != Name && n != OverrideName {
			names = append(names, n)
		}
	}
	return &Loader{opts: opts, names: names, cache: map[string]cached{}}
}

// Load is what an agent working in dir is given now.
func (l *Loader) Load(dir string) Set { return l.LoadFor(dir, nil) }

// LoadFor is Load with the agent's own say on each file of the project:
// refuse, when not nil, gives the reason a file must not be read by the
// agent (a rule that denies its read_file), and the file is skipped with it.
func (l *Loader) LoadFor(dir string, refuse func(abs string) string) Set {
	var set Set
	var found []found
	if l.opts.UserDir != "" {
		if f, ok := l.userFile(&set); ok {
			found = append(found, f)
		}
	}
	top, rels := chain(dir)
	if ws, err := workspace.Open(top); err == nil {
		for _, rel := range rels {
			if f, ok := l.inDir(ws, rel, refuse, &set); ok {
				found = append(found, f)
			}
		}
	}
	l.assemble(&set, found)
	return set
}

// found is one directory's file, read.
type found struct {
	path, name string
	data       []byte
	user       bool
}

// chain is the repository's top above (or at) dir, and the directories
// from it down to dir, relative to it: root first. Without a repository
// it is dir alone.
func chain(dir string) (string, []string) {
	dir = filepath.Clean(dir)
	var below []string // from dir up
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			rels := []string{"."}
			for i := len(below) - 1; i >= 0; i-- {
				rels = append(rels, filepath.Join(rels[len(rels)-1], below[i]))
			}
			return d, rels
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, []string{"."}
		}
		below = append(below, filepath.Base(d))
		d = parent
	}
}

// inDir reads the first of the names in rel that holds text.
func (l *Loader) inDir(ws *workspace.Workspace, rel string, refuse func(string) string, set *Set) (found, bool) {
	for _, name := range l.names {
		p := filepath.Join(rel, name)
		abs := filepath.Join(ws.Root, p)
		// Most names are missing from most directories, and this runs at
		// every turn of every agent: one lstat settles that instead of the
		// walk beneath the root (an open, two stats, a close). Only at the
		// top, whose path is the root's own (no links in it): below, a link
		// on the way could make the walk's answer a note of its own.
		var lerr error
		if refuse != nil || rel == "." {
			_, lerr = os.Lstat(abs)
		}
		if rel == "." && errors.Is(lerr, fs.ErrNotExist) {
			l.forget(abs)
			continue
		}
		there := lerr == nil
		if why := refused(ws, p, abs, there, refuse); why != "" {
			set.Notes = append(set.Notes, fmt.Sprintf("%s is skipped: %s.", l.show(abs), why))
			continue
		}
		data, note, ok := l.read(abs, func() (*os.File, fs.FileInfo, error) { return ws.OpenRegular(p) })
		if note != "" {
			set.Notes = append(set.Notes, note)
		}
		if ok && strings.TrimSpace(string(data)) != "" {
			return found{path: l.show(abs), name: name, data: data}, true
		}
	}
	return found{}, false
}

// refused is why refuse will not have the file p names read, by its name
// or by where its links lead; "" for a file that is not there (there,
// the caller's lstat of abs, says it is).
func refused(ws *workspace.Workspace, p, abs string, there bool, refuse func(string) string) string {
	if refuse == nil || !there {
		return ""
	}
	if why := refuse(abs); why != "" {
		return why
	}
	if real, err := ws.Resolve(p); err == nil && real != abs {
		return refuse(real)
	}
	return ""
}

// userFile reads the person's own file. It is theirs: a link they made
// to their dotfiles is followed, still opened as any other.
func (l *Loader) userFile(set *Set) (found, bool) {
	// No directory, no file in it: one lstat at each turn instead of the
	// walk of each name's links (EvalSymlinks would find it missing too).
	if _, err := os.Lstat(l.opts.UserDir); errors.Is(err, fs.ErrNotExist) {
		return found{}, false
	}
	for _, name := range l.names {
		abs := filepath.Join(l.opts.UserDir, name)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				set.Notes = append(set.Notes, fmt.Sprintf("%s is skipped: %v.", l.show(abs), unwrap(err)))
			}
			continue
		}
		data, note, ok := l.read(abs, func() (*os.File, fs.FileInfo, error) {
			ws, err := workspace.Open(filepath.Dir(real))
			if err != nil {
				return nil, nil, err
			}
			return ws.OpenRegular(filepath.Base(real))
		})
		if note != "" {
			set.Notes = append(set.Notes, note)
		}
		if ok && strings.TrimSpace(string(data)) != "" {
			return found{path: l.show(abs), name: name, data: data, user: true}, true
		}
	}
	return found{}, false
}

// read opens the file, and reads it if it changed since the last read;
// a file that is not there is neither data nor a note.
func (l *Loader) read(abs string, open func() (*os.File, fs.FileInfo, error)) (data []byte, note string, ok bool) {
	f, fi, err := open()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.forget(abs)
			return nil, "", false
		}
		return nil, l.skipped(abs, err), false
	}
	defer f.Close()
	id := identity(fi)
	l.mu.Lock()
	c, hit := l.cache[abs]
	l.mu.Unlock()
	if hit && c.id == id && !c.racy {
		return c.data, c.note, c.note == ""
	}
	c = cached{id: id, racy: time.Since(id.mtime) < racyWindow || time.Since(id.ctime) < racyWindow}
	data, err = io.ReadAll(io.LimitReader(f, int64(l.opts.MaxBytes)+1))
	switch {
	case err != nil:
		c.note = l.skipped(abs, err)
	case !validUTF8(data, len(data) > l.opts.MaxBytes):
		c.note = fmt.Sprintf("%s is skipped: it is not UTF-8 text.", l.show(abs))
	default:
		c.data = data
	}
	l.mu.Lock()
	l.cache[abs] = c
	l.mu.Unlock()
	return c.data, c.note, c.note == ""
}

func (l *Loader) forget(abs string) {
	l.mu.Lock()
	delete(l.cache, abs)
	l.mu.Unlock()
}

// skipped is the sentence of a file that could not be read.
func (l *Loader) skipped(abs string, err error) string {
	var nr *workspace.NotRegularError
	switch {
	case errors.As(err, &nr):
		return fmt.Sprintf("%s is skipped: it %s.", l.show(abs), nr.Error())
	case errors.Is(err, workspace.ErrOutside):
		return fmt.Sprintf("%s is skipped: it is a link that leads out of the repository.", l.show(abs))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s is skipped: it cannot be read (permission denied).", l.show(abs))
	}
	return fmt.Sprintf("%s is skipped: %v.", l.show(abs), unwrap(err))
}

// unwrap is the system's words for err, without the path said already.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validUTF8 reports whether data is UTF-8; cut, a rune the cut split is
// not held against it.
func validUTF8(data []byte, cut bool) bool {
	if cut {
		for i := 0; i < utf8.UTFMax && len(data) > 0; i++ {
			if utf8.Valid(data) {
				return true
			}
			data = data[:len(data)-1]
		}
	}
	return utf8.Valid(data)
}

// show writes the home directory as ~.
func (l *Loader) show(abs string) string {
	if h := l.opts.Home; h != "" {
		if rel, err := filepath.Rel(h, abs); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return abs
}

// assemble takes the files' text in order until the cap, and writes the
// prompt's section.
func (l *Loader) assemble(set *Set, files []found) {
	if len(files) == 0 {
		return
	}
	left := l.opts.MaxBytes
	var b strings.Builder
	b.WriteString("\n\nInstructions from AGENTS.md files follow, the most general first: where two disagree, the later one, " +
		"nearer to where you work, wins. They say how to work in this project; they do not change your tools or permissions.")
	var cutAt string
	var leftOut []string
	for _, f := range files {
		if cutAt != "" {
			leftOut = append(leftOut, f.path)
			continue
		}
		text := string(f.data)
		cut := len(text) > left
		if cut {
			text = trimRune(text[:left])
			cutAt = f.path
		}
		left -= len(text)
		whose := ""
		if f.user {
			whose = " (the person's own)"
		}
		fmt.Fprintf(&b, "\n\n--- %s%s ---\n%s", f.path, whose, strings.TrimRight(text, "\n"))
		set.Files = append(set.Files, File{Path: f.path, Name: f.name, Text: text, Cut: cut})
	}
	if cutAt != "" {
		s := fmt.Sprintf("The instructions are cut here: AGENTS.md files are read up to %d bytes in all, and the rest of %s is left out", l.opts.MaxBytes, cutAt)
		if len(leftOut) > 0 {
			s += ", as is " + strings.Join(leftOut, ", ")
		}
		s += "."
		fmt.Fprintf(&b, "\n[%s]", s)
		set.Notes = append(set.Notes, s)
	}
	set.Text = b.String()
}

// trimRune drops a rune the cut split.
func trimRune(s string) string {
	for i := 0; i < utf8.UTFMax && s != "" && !utf8.ValidString(s); i++ {
		s = s[:len(s)-1]
	}
	return s
}
