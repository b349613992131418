package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// repo is the git repository a command's directory lies in, as found from
// outside the sandbox: what of it the sandbox keeps read-only, because a
// person's own git later runs what these files say (hooks, filters,
// core.hooksPath, core.fsmonitor).
type repo struct {
	// file is a linked worktree's .git file, which names its git dir; ""
	// when .git is a directory.
	file string
	// dirs are the git dir and, for a linked worktree, its common dir
	// (first), whose config and hooks every worktree shares.
	dirs []string
}

// findRepo walks up from dir to the first .git, as git does; the zero repo
// when there is none. It runs no git: the repository may be hostile.
func findRepo(dir string) repo {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return repo{dirs: gitDirs(dotgit)}
			}
			r := repo{file: dotgit}
			if gd := readGitFile(dotgit); gd != "" {
				r.dirs = gitDirs(gd)
			}
			return r
		}
		if filepath.Dir(d) == d {
			return repo{}
		}
	}
}

// gitDirs is gd, after its common dir when it has one (a linked worktree's
// git dir names it in its commondir file).
func gitDirs(gd string) []string {
	b, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return []string{gd}
	}
	common := strings.TrimSpace(string(b))
	if common == "" {
		return []string{gd}
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(gd, common)
	}
	return []string{filepath.Clean(common), gd}
}

// readGitFile is the git dir a .git file names ("gitdir: PATH", relative to
// the file's directory), "" when it names none.
func readGitFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if gd = strings.TrimSpace(gd); !ok || gd == "" {
		return ""
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return filepath.Clean(gd)
}
