package atpath

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/workspace"
)

// MaxDirEntries bounds the entries read of one directory, so that a huge
// tree never stalls completion: what is past it is not offered.
const MaxDirEntries = 2000

// maxIgnoreBytes bounds what is read of one .gitignore.
const maxIgnoreBytes = 64 << 10

// Entry is one name @path completion offers.
type Entry struct {
	Name string
	Dir  bool // a directory, which completion descends into
}

// Listing is what completion offers in one directory of the workspace.
type Listing struct {
	Entries []Entry // sorted by name
	Cut     bool    // the directory holds more than MaxDirEntries entries
	Err     string  // why nothing is offered (outside the workspace…); "" if all is well
}

// ListedMsg is one directory's listing, read by a tea.Cmd.
type ListedMsg struct {
	Dir     string
	Listing Listing
}

// Cache holds the directories listed for @path completion, each read
// once (by a tea.Cmd, never in Update) until the next message is sent.
type Cache struct {
	Root string              // the workspace; "" turns @path completion off
	dirs map[string]*Listing // by directory as typed ("" is the root); nil while it is read
}

// Listing is dir's listing if it was read; otherwise a command that reads
// it, or nil if that command is already on its way.
func (c *Cache) Listing(dir string) (*Listing, tea.Cmd) {
	if l, ok := c.dirs[dir]; ok {
		return l, nil
	}
	if c.dirs == nil {
		c.dirs = map[string]*Listing{}
	}
	c.dirs[dir] = nil
	root := c.Root
	return nil, func() tea.Msg { return ListedMsg{Dir: dir, Listing: List(root, dir)} }
}

// Read is dir's listing without asking for it: asked is false when
// nobody asked for it yet, l nil while it is read.
func (c *Cache) Read(dir string) (l *Listing, asked bool) {
	l, asked = c.dirs[dir]
	return l, asked
}

// Pending are the directories asked for and not read yet, sorted.
func (c *Cache) Pending() []string {
	var out []string
	for dir, l := range c.dirs {
		if l == nil {
			out = append(out, dir)
		}
	}
	sort.Strings(out)
	return out
}

// Store keeps a listing that arrived; one asked for before a reset is dropped.
func (c *Cache) Store(msg ListedMsg) {
	if l, ok := c.dirs[msg.Dir]; ok && l == nil {
		c.dirs[msg.Dir] = &msg.Listing
	}
}

// Reset forgets every listing: files change while agents work.
func (c *Cache) Reset() { c.dirs = nil }

// Word splits the @word before the cursor into its directory part, as
// typed with its slash ("docs/"), and the start of a name ("RE"); ok is
// false when the word is not an @path.
func Word(word string) (dirPart, prefix string, ok bool) {
	if !strings.HasPrefix(word, "@") {
		return "", "", false
	}
	rest := word[1:]
	i := strings.LastIndex(rest, "/")
	return rest[:i+1], rest[i+1:], true
}

// DirKey is the cache's key of a typed directory part.
func DirKey(dirPart string) string {
	if dirPart == "" {
		return ""
	}
	if strings.HasPrefix(dirPart, "/") {
		return path.Clean(dirPart) // absolute: List refuses it unless inside
	}
	k := path.Clean(dirPart)
	if k == "." {
		return ""
	}
	return k
}

// List reads what completion offers in dir (slash-separated, relative
// to root, "" for the root): at most maxDirEntries entries, none of .git or
// .agentteam, none that a .gitignore excludes, no link that leads out of
// the workspace, nothing but directories and regular files.
func List(root, dir string) Listing {
	ws, err := workspace.Open(root)
	if err != nil {
		return Listing{Err: err.Error()}
	}
	if dir == "" {
		dir = "."
	}
	pl, err := ws.Place(dir)
	if err != nil {
		return Listing{Err: err.Error()}
	}
	defer pl.Close()
	rel, err := filepath.Rel(ws.Root, pl.Abs())
	if err != nil {
		return Listing{Err: err.Error()}
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	if hiddenPath(rel) {
		return Listing{}
	}
	rules := loadIgnore(ws, rel)
	if rel != "" {
		parts := strings.Split(rel, "/")
		for i := range parts {
			if rules.ignored(strings.Join(parts[:i+1], "/"), true) {
				return Listing{} // git never looks inside an excluded directory
			}
		}
	}
	f, err := pl.OpenDir()
	if err != nil {
		return Listing{Err: "cannot read " + dir + ": " + errText(err)}
	}
	defer f.Close()
	des, err := f.ReadDir(MaxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return Listing{Err: "cannot read " + dir + ": " + errText(err)}
	}
	var l Listing
	if len(des) > MaxDirEntries {
		des, l.Cut = des[:MaxDirEntries], true
	}
	for _, de := range des {
		name := de.Name()
		if isHiddenName(name) || !plainName(name) {
			continue
		}
		var isDir bool
		switch t := de.Type(); {
		case t.IsDir():
			isDir = true
		case t.IsRegular():
		case t&os.ModeSymlink != 0:
			// A link is offered for what it leads to, only if that is inside.
			m, ok := linkTarget(ws, path.Join(rel, name))
			if !ok || !(m.IsDir() || m.IsRegular()) {
				continue
			}
			isDir = m.IsDir()
		default:
			continue // a FIFO, socket or device is never attached
		}
		if rules.ignored(path.Join(rel, name), isDir) {
			continue
		}
		l.Entries = append(l.Entries, Entry{Name: name, Dir: isDir})
	}
	sort.Slice(l.Entries, func(i, j int) bool { return l.Entries[i].Name < l.Entries[j].Name })
	return l
}

// linkTarget is the type of what the link at rel leads to, if that is inside the workspace.
func linkTarget(ws *workspace.Workspace, rel string) (fs.FileMode, bool) {
	pl, err := ws.Place(rel)
	if err != nil {
		return 0, false
	}
	defer pl.Close()
	m, err := pl.Mode()
	return m, err == nil
}

// plainName reports whether a file's name can be offered: a control
// character could drive the terminal, and an @path ends at a space.
func plainName(name string) bool {
	return utf8.ValidString(name) && strings.IndexFunc(name, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r) || r == 0x7f
	}) < 0
}

// isHiddenName is what completion never offers at any depth.
func isHiddenName(name string) bool {
	return name == ".git" || strings.EqualFold(name, workspace.StateDir)
}

func hiddenPath(rel string) bool {
	for _, p := range strings.Split(rel, "/") {
		if isHiddenName(p) {
			return true
		}
	}
	return false
}

// loadIgnore reads the rules for the directory rel: .git/info/exclude and
// the .gitignore of the root and of each directory down to rel.
func loadIgnore(ws *workspace.Workspace, rel string) ignoreRules {
	var rules ignoreRules
	if text, err := readRegular(ws, ".git/info/exclude", maxIgnoreBytes); err == nil {
		rules = append(rules, parseIgnore("", string(text.data))...)
	}
	dirs := []string{""}
	if rel != "" {
		parts := strings.Split(rel, "/")
		for i := range parts {
			dirs = append(dirs, strings.Join(parts[:i+1], "/"))
		}
	}
	for _, d := range dirs {
		if text, err := readRegular(ws, path.Join(d, ".gitignore"), maxIgnoreBytes); err == nil {
			rules = append(rules, parseIgnore(d, string(text.data))...)
		}
	}
	return rules
}

// errText is an error's last words, without the path Go puts before them.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
