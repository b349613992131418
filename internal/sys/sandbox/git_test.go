package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// findRepo finds the repository as git would, from files alone: a .git
// directory up the tree, a worktree's .git file (relative or absolute) and
// its commondir, the submodules' .git files, core.hooksPath in the
// repository's config and the person's.
func TestFindRepo(t *testing.T) {
	base := t.TempDir()
	t.Setenv("HOME", base) // no global git config of the machine's
	t.Setenv("XDG_CONFIG_HOME", "")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main/.git/HEAD", "ref: refs/heads/main\n")
	write("main/.git/worktrees/wt/commondir", "../..\n")
	write("main/.gitmodules", "[submodule \"x\"]\n\tpath = lib/x\n\turl = ../x\n[submodule \"up\"]\n\tpath = ../../etc\n")
	write("main/lib/x/.git", "gitdir: ../../.git/modules/lib/x\n")
	write("main/sub/deep/file", "")
	write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n")
	write("abs/.git", "gitdir: "+filepath.Join(base, "main/.git/worktrees/wt")+"\n")
	write("bad/.git", "not a pointer\n")
	write("husky/.git/config", "[core]\n\tbare = false\n[Core]\n\thooksPath = \".husky/_\"\n[other]\n\thookspath = no\n")
	write(".gitconfig", "[core]\n\thooksPath = ~/hooks\n")
	if err := os.MkdirAll(filepath.Join(base, "none"), 0o755); err != nil {
		t.Fatal(err)
	}
	main, wtDir := filepath.Join(base, "main/.git"), filepath.Join(base, "main/.git/worktrees/wt")
	global := []string{filepath.Join(base, "hooks")}
	for _, tc := range []struct {
		dir  string
		want repo
	}{
		{"main", repo{files: []string{filepath.Join(base, "main/lib/x/.git")}, dirs: []string{main}, hooks: global}},
		{"main/sub/deep", repo{files: []string{filepath.Join(base, "main/lib/x/.git")}, dirs: []string{main}, hooks: global}},
		{"wt", repo{files: []string{filepath.Join(base, "wt/.git")}, dirs: []string{main, wtDir}, hooks: global}},
		{"abs", repo{files: []string{filepath.Join(base, "abs/.git")}, dirs: []string{main, wtDir}, hooks: global}},
		{"bad", repo{files: []string{filepath.Join(base, "bad/.git")}, hooks: global}},
		{"husky", repo{dirs: []string{filepath.Join(base, "husky/.git")},
			hooks: append([]string{filepath.Join(base, "husky/.husky/_"), filepath.Join(base, "husky/.husky")}, global...)}},
	} {
		if got := findRepo(filepath.Join(base, tc.dir)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("findRepo(%s) = %+v, want %+v", tc.dir, got, tc.want)
		}
	}
	// Up from a directory in no repository there is none, unless the test
	// machine keeps one above the temp dir.
	if got := findRepo(filepath.Join(base, "none")); len(got.dirs) > 0 && within(got.dirs[0], base) {
		t.Errorf("findRepo(none) = %+v", got)
	}
}
