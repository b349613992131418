package agentsmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo is a repository with the workspace in its subdirectory sub.
func repo(t *testing.T) (top, sub string) {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub = filepath.Join(top, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return top, sub
}

func paths(s Set) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestLoadOrderRootFirstUserFirstOfAll(t *testing.T) {
	top, sub := repo(t)
	user := t.TempDir()
	write(t, filepath.Join(user, "AGENTS.md"), "USER RULE\n")
	write(t, filepath.Join(top, "AGENTS.md"), "ROOT RULE\n")
	write(t, filepath.Join(sub, "CLAUDE.md"), "SUB RULE (claude)\n")
	write(t, filepath.Join(top, "CRUSH.md"), "never read: the root has AGENTS.md\n")

	s := New(Options{UserDir: user, Fallbacks: []string{"CLAUDE.md", "CRUSH.md"}}).Load(sub)
	want := []string{filepath.Join(user, "AGENTS.md"), filepath.Join(top, "AGENTS.md"), filepath.Join(sub, "CLAUDE.md")}
	if got := paths(s); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("files %v, want %v", got, want)
	}
	u, r, c := strings.Index(s.Text, "USER RULE"), strings.Index(s.Text, "ROOT RULE"), strings.Index(s.Text, "SUB RULE")
	if u < 0 || r < u || c < r || strings.Contains(s.Text, "never read") {
		t.Fatalf("text out of order:\n%s", s.Text)
	}
	if got := s.Summary(); got != "AGENTS.md ×2, CLAUDE.md" {
		t.Fatalf("summary %q", got)
	}
	if len(s.Notes) != 0 {
		t.Fatalf("notes %v", s.Notes)
	}
}

func TestLoadOverrideWinsAndFallbackOnlyWhenConfigured(t *testing.T) {
	top, sub := repo(t)
	write(t, filepath.Join(top, "AGENTS.md"), "plain\n")
	write(t, filepath.Join(top, OverrideName), "override\n")
	write(t, filepath.Join(sub, "CLAUDE.md"), "claude\n")
	s := New(Options{}).Load(sub)
	if got := paths(s); len(got) != 1 || got[0] != filepath.Join(top, OverrideName) || strings.Contains(s.Text, "plain") {
		t.Fatalf("files %v:\n%s", got, s.Text)
	}
}

func TestLoadWithoutRepositoryIsTheDirectoryAlone(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "AGENTS.md"), "here\n")
	write(t, filepath.Join(dir, "deeper", "AGENTS.md"), "deeper\n")
	s := New(Options{}).Load(filepath.Join(dir, "deeper"))
	if got := paths(s); len(got) != 1 || got[0] != filepath.Join(dir, "deeper", "AGENTS.md") {
		t.Fatalf("files %v", got)
	}
}

func TestLoadNothingIsNothing(t *testing.T) {
	_, sub := repo(t)
	s := New(Options{UserDir: t.TempDir()}).Load(sub)
	if s.Text != "" || len(s.Files) != 0 || len(s.Notes) != 0 || s.Summary() != "" {
		t.Fatalf("%+v", s)
	}
}

// Each bad file is skipped with one sentence, and the next name is tried.
func TestLoadBadFilesAreSkippedWithASentence(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, top, p string)
		want string
	}{
		{"fifo", func(t *testing.T, _, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
		}, "is a named pipe (FIFO), not a regular file"},
		{"directory", func(t *testing.T, _, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file"},
		{"link out", func(t *testing.T, _, p string) {
			out := filepath.Join(t.TempDir(), "secret.md")
			write(t, out, "SECRET OUTSIDE\n")
			if err := os.Symlink(out, p); err != nil {
				t.Fatal(err)
			}
		}, "is a link that leads out of the repository"},
		{"relative link out", func(t *testing.T, _, p string) {
			if err := os.Symlink("../../../../../../../../etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}, "is a link that leads out of the repository"},
		{"not utf-8", func(t *testing.T, _, p string) {
			write(t, p, "caf\xe9 \xff\xfe\n")
		}, "is not UTF-8 text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, sub := repo(t)
			p := filepath.Join(top, "AGENTS.md")
			c.make(t, top, p)
			write(t, filepath.Join(top, "CLAUDE.md"), "FALLBACK\n")
			s := New(Options{Fallbacks: []string{"CLAUDE.md"}}).Load(sub)
			if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], p+" is skipped: ") || !strings.Contains(s.Notes[0], c.want) {
				t.Fatalf("notes %q, want one with %q", s.Notes, c.want)
			}
			if got := paths(s); len(got) != 1 || got[0] != filepath.Join(top, "CLAUDE.md") {
				t.Fatalf("files %v: the fallback should stand in", got)
			}
			if strings.Contains(s.Text, "SECRET") || strings.Contains(s.Text, "root:") {
				t.Fatalf("text holds what it must not:\n%s", s.Text)
			}
		})
	}
}

// A link inside the repository is followed: CLAUDE.md → AGENTS.md is common.
func TestLoadLinkInsideIsFollowed(t *testing.T) {
	top, sub := repo(t)
	write(t, filepath.Join(top, "docs", "agents.md"), "LINKED\n")
	if err := os.Symlink("docs/agents.md", filepath.Join(top, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	s := New(Options{}).Load(sub)
	if !strings.Contains(s.Text, "LINKED") || len(s.Notes) != 0 {
		t.Fatalf("notes %v:\n%s", s.Notes, s.Text)
	}
}

func TestLoadCapCutsWithASentence(t *testing.T) {
	top, sub := repo(t)
	write(t, filepath.Join(top, "AGENTS.md"), strings.Repeat("r", 800)+"\n")
	// Cut inside a rune: the text stays UTF-8.
	write(t, filepath.Join(sub, "AGENTS.md"), strings.Repeat("é", 5000))
	huge := filepath.Join(sub, "deep")
	write(t, filepath.Join(huge, "AGENTS.md"), "NEVER "+strings.Repeat("x", 10<<20))
	s := New(Options{MaxBytes: 1500}).Load(huge)
	if len(s.Files) != 2 || s.Files[0].Cut || !s.Files[1].Cut {
		t.Fatalf("files %+v", paths(s))
	}
	if n := len(s.Files[0].Text) + len(s.Files[1].Text); n > 1500 {
		t.Fatalf("%d bytes given, more than the cap", n)
	}
	if !strings.Contains(s.Text, "The instructions are cut here: AGENTS.md files are read up to 1500 bytes in all, and the rest of "+filepath.Join(sub, "AGENTS.md")+" is left out, as is "+filepath.Join(huge, "AGENTS.md")+".") {
		t.Fatalf("no cut sentence:\n%s", s.Text[len(s.Text)-300:])
	}
	if strings.Contains(s.Text, "NEVER") || len(s.Notes) != 1 {
		t.Fatalf("notes %v", s.Notes)
	}
	if !validUTF8([]byte(s.Text), false) {
		t.Fatal("the cut split a rune")
	}
}

// An edit is read at the next Load; an unchanged file is not read again.
func TestLoadRereadsOnChangeOnly(t *testing.T) {
	top, sub := repo(t)
	p := filepath.Join(top, "AGENTS.md")
	write(t, p, "first\n")
	l := New(Options{})
	if s := l.Load(sub); !strings.Contains(s.Text, "first") {
		t.Fatal(s.Text)
	}
	write(t, p, "second, longer\n")
	if s := l.Load(sub); !strings.Contains(s.Text, "second") {
		t.Fatalf("the edit was not read:\n%s", s.Text)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if s := l.Load(sub); s.Text != "" {
		t.Fatalf("a removed file is still given:\n%s", s.Text)
	}

	// Unchanged and not recent: the cached bytes are given, the file is not read.
	write(t, p, "cached\n")
	fi, _ := os.Stat(p)
	old := fi.ModTime().Add(-racyWindow * 2)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	l = New(Options{})
	l.Load(sub)
	l.mu.Lock()
	c := l.cache[p]
	c.data = []byte("FROM CACHE\n")
	c.racy = false
	l.cache[p] = c
	l.mu.Unlock()
	if s := l.Load(sub); !strings.Contains(s.Text, "FROM CACHE") {
		t.Fatalf("an unchanged file was read again:\n%s", s.Text)
	}
}

// The person's own file may be a link to their dotfiles; a FIFO there is skipped.
func TestLoadUserFile(t *testing.T) {
	_, sub := repo(t)
	user, dots := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dots, "agents.md"), "MY DOTFILES\n")
	if err := os.Symlink(filepath.Join(dots, "agents.md"), filepath.Join(user, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	s := New(Options{UserDir: user, Home: filepath.Dir(user)}).Load(sub)
	if !strings.Contains(s.Text, "MY DOTFILES") || !strings.Contains(s.Text, "--- ~/"+filepath.Base(user)+"/AGENTS.md (the person's own) ---") {
		t.Fatalf("notes %v:\n%s", s.Notes, s.Text)
	}
	if err := os.Remove(filepath.Join(user, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(user, "AGENTS.md"), 0o644); err != nil {
		t.Skip(err)
	}
	s = New(Options{UserDir: user}).Load(sub)
	if s.Text != "" || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "named pipe") {
		t.Fatalf("notes %v:\n%s", s.Notes, s.Text)
	}
}

// A file the agent may not read is skipped with the reason, by its name
// or by where its link leads, and the next name stands in.
func TestLoadForRefusedFilesAreSkipped(t *testing.T) {
	top, sub := repo(t)
	write(t, filepath.Join(sub, "private.md"), "PRIVATE\n")
	if err := os.Symlink("private.md", filepath.Join(sub, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "CLAUDE.md"), "CLAUDE\n")
	write(t, filepath.Join(top, "AGENTS.md"), "TOP\n")
	refuse := func(abs string) string {
		if filepath.Base(abs) == "private.md" {
			return "a deny rule covers it"
		}
		return ""
	}
	s := New(Options{Fallbacks: []string{"CLAUDE.md"}}).LoadFor(sub, refuse)
	if strings.Contains(s.Text, "PRIVATE") || !strings.Contains(s.Text, "CLAUDE") || !strings.Contains(s.Text, "TOP") {
		t.Fatalf("text:\n%s", s.Text)
	}
	if len(s.Notes) != 1 || s.Notes[0] != filepath.Join(sub, "AGENTS.md")+" is skipped: a deny rule covers it." {
		t.Fatalf("notes %q", s.Notes)
	}
}

// A file missing at one load (settled by an lstat, without the walk) and
// made before the next is read at the next, at the top and in the person's
// directory, which need not exist at first either.
func TestLoadFindsFilesMadeSinceTheyWereMissing(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(t.TempDir(), "agentteam")
	l := New(Options{UserDir: user})
	refuse := func(string) string { return "" }
	for _, load := range []func() Set{func() Set { return l.Load(dir) }, func() Set { return l.LoadFor(dir, refuse) }} {
		if s := load(); s.Text != "" || len(s.Notes) != 0 {
			t.Fatalf("nothing there, yet: %q %q", s.Text, s.Notes)
		}
	}
	write(t, filepath.Join(dir, OverrideName), "OVERRIDE\n")
	write(t, filepath.Join(user, Name), "MINE\n")
	for _, load := range []func() Set{func() Set { return l.Load(dir) }, func() Set { return l.LoadFor(dir, refuse) }} {
		if s := load(); !strings.Contains(s.Text, "OVERRIDE") || !strings.Contains(s.Text, "MINE") {
			t.Fatalf("notes %q:\n%s", s.Notes, s.Text)
		}
	}
	// A directory at a name is not missing: it is skipped with its sentence.
	if err := os.Remove(filepath.Join(dir, OverrideName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, OverrideName), 0o755); err != nil {
		t.Fatal(err)
	}
	if s := l.LoadFor(dir, refuse); len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "directory") {
		t.Fatalf("notes %q:\n%s", s.Notes, s.Text)
	}
}
