package tui

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

// maxDirEntries bounds the entries read of one directory, so that a huge
// tree never stalls completion: what is past it is not offered.
const maxDirEntries = 2000

// maxIgnoreBytes bounds what is read of one .gitignore.
const maxIgnoreBytes = 64 << 10

// pathEntry is one name @path completion offers.
type pathEntry struct {
	name string
	dir  bool
}

// dirListing is what completion offers in one directory of the workspace.
type dirListing struct {
	entries []pathEntry // sorted by name
	cut     bool        // the directory holds more than maxDirEntries entries
	err     string      // why nothing is offered (outside the workspace…); "" if all is well
}

// dirListedMsg is one directory's listing, read by a tea.Cmd.
type dirListedMsg struct {
	dir     string
	listing dirListing
}

// pathCache holds the directories listed for @path completion, each read
// once (by a tea.Cmd, never in Update) until the next message is sent.
type pathCache struct {
	root string                 // the workspace; "" turns @path completion off
	dirs map[string]*dirListing // by directory as typed ("" is the root); nil while it is read
}

// listing is dir's listing if it was read; otherwise a command that reads
// it, or nil if that command is already on its way.
func (c *pathCache) listing(dir string) (*dirListing, tea.Cmd) {
	if l, ok := c.dirs[dir]; ok {
		return l, nil
	}
	if c.dirs == nil {
		c.dirs = map[string]*dirListing{}
	}
	c.dirs[dir] = nil
	root := c.root
	return nil, func() tea.Msg { return dirListedMsg{dir: dir, listing: listDir(root, dir)} }
}

// store keeps a listing that arrived; one asked for before a reset is dropped.
func (c *pathCache) store(msg dirListedMsg) {
	if l, ok := c.dirs[msg.dir]; ok && l == nil {
		c.dirs[msg.dir] = &msg.listing
	}
}

// reset forgets every listing: files change while agents work.
func (c *pathCache) reset() { c.dirs = nil }

// pathWord splits the @word before the cursor into its directory part, as
// typed with its slash ("docs/"), and the start of a name ("RE"); ok is
// false when the word is not an @path.
func pathWord(word string) (dirPart, prefix string, ok bool) {
	if !strings.HasPrefix(word, "@") {
		return "", "", false
	}
	rest := word[1:]
	i := strings.LastIndex(rest, "/")
	return rest[:i+1], rest[i+1:], true
}

// dirKey is the cache's key of a typed directory part.
func dirKey(dirPart string) string {
	if dirPart == "" {
		return ""
	}
	if strings.HasPrefix(dirPart, "/") {
		return path.Clean(dirPart) // absolute: listDir refuses it unless inside
	}
	k := path.Clean(dirPart)
	if k == "." {
		return ""
	}
	return k
}

// pathItems are the names in l that complete prefix: those that start
// with it, or ignoring case when none does. Names starting with a dot are
// offered only when the prefix starts with one.
func pathItems(l *dirListing, dirPart, prefix string) []popItem {
	var exact, folded []popItem
	for _, e := range l.entries {
		if strings.HasPrefix(e.name, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		it := popItem{label: e.name, value: "@" + dirPart + e.name, final: !e.dir}
		if e.dir {
			it.label += "/"
			it.value += "/"
			it.desc = "directory"
		}
		switch {
		case strings.HasPrefix(e.name, prefix):
			exact = append(exact, it)
		case strings.HasPrefix(strings.ToLower(e.name), strings.ToLower(prefix)):
			folded = append(folded, it)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}

// listDir reads what completion offers in dir (slash-separated, relative
// to root, "" for the root): at most maxDirEntries entries, none of .git or
// .agentteam, none that a .gitignore excludes, no link that leads out of
// the workspace, nothing but directories and regular files.
func listDir(root, dir string) dirListing {
	ws, err := workspace.Open(root)
	if err != nil {
		return dirListing{err: err.Error()}
	}
	if dir == "" {
		dir = "."
	}
	pl, err := ws.Place(dir)
	if err != nil {
		return dirListing{err: err.Error()}
	}
	defer pl.Close()
	rel, err := filepath.Rel(ws.Root, pl.Abs())
	if err != nil {
		return dirListing{err: err.Error()}
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	if hiddenPath(rel) {
		return dirListing{}
	}
	rules := loadIgnore(ws, rel)
	if rel != "" {
		parts := strings.Split(rel, "/")
		for i := range parts {
			if rules.ignored(strings.Join(parts[:i+1], "/"), true) {
				return dirListing{} // git never looks inside an excluded directory
			}
		}
	}
	f, err := pl.OpenDir()
	if err != nil {
		return dirListing{err: "cannot read " + dir + ": " + errText(err)}
	}
	defer f.Close()
	des, err := f.ReadDir(maxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return dirListing{err: "cannot read " + dir + ": " + errText(err)}
	}
	var l dirListing
	if len(des) > maxDirEntries {
		des, l.cut = des[:maxDirEntries], true
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
		l.entries = append(l.entries, pathEntry{name: name, dir: isDir})
	}
	sort.Slice(l.entries, func(i, j int) bool { return l.entries[i].name < l.entries[j].name })
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
