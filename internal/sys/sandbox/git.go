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
	// files are the .git files that name a git dir: a linked worktree's
	// own, and its submodules' (by the paths .gitmodules gives).
	files []string
	// dirs are the git dir and, for a linked worktree, its common dir
	// (first), whose config and hooks every worktree shares.
	dirs []string
	// hooks are the directories core.hooksPath names, in the repository's
	// config or the person's own: often in the work tree (.husky).
	hooks []string
}

// findRepo walks up from dir to the first .git, as git does; the zero repo
// when there is none. It runs no git: the repository may be hostile.
func findRepo(dir string) repo {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			r := repo{files: submoduleFiles(d)}
			if fi.IsDir() {
				r.dirs = gitDirs(dotgit)
			} else {
				r.files = append([]string{dotgit}, r.files...)
				if gd := readGitFile(dotgit); gd != "" {
					r.dirs = gitDirs(gd)
				}
			}
			r.hooks = hooksPaths(d, r.dirs)
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

// hooksPaths are the directories core.hooksPath names in the repository's
// config and the person's global ones, relative to the work tree top;
// husky's "_" runs the hooks one directory up, so that one too.
func hooksPaths(top string, dirs []string) []string {
	home, _ := os.UserHomeDir()
	configs := []string{}
	if len(dirs) > 0 {
		configs = append(configs, filepath.Join(dirs[0], "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		configs = append(configs, filepath.Join(x, "git", "config"))
	}
	var out []string
	for _, c := range configs {
		p := configValue(c, "core", "hookspath")
		switch {
		case p == "":
			continue
		case strings.HasPrefix(p, "~/") && home != "":
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(top, p)
		}
		if p = filepath.Clean(p); p == "/" {
			continue
		}
		out = append(out, p)
		if filepath.Base(p) == "_" {
			out = append(out, filepath.Dir(p))
		}
	}
	return out
}

// configValue is the last value of section.key in the git config file at
// path ("" when unset): a plain reading of what git would, without the
// includes.
func configValue(path, section, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var in bool
	var val string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(strings.Trim(line, "[]"), " ")
			in = strings.EqualFold(strings.TrimSpace(name), section)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if in && ok && strings.EqualFold(strings.TrimSpace(k), key) {
			val = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return val
}

// submoduleFiles are the .git files of the submodules .gitmodules in the
// work tree top names ("path = lib/x"), those there.
func submoduleFiles(top string) []string {
	b, err := os.ReadFile(filepath.Join(top, ".gitmodules"))
	if err != nil {
		return nil
	}
	var files []string
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) != "path" {
			continue
		}
		f := filepath.Join(top, strings.TrimSpace(val), ".git")
		if within(f, top) {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				files = append(files, f)
			}
		}
	}
	return files
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
