package atpath

import "testing"

func TestIgnoreRules(t *testing.T) {
	rules := append(parseIgnore("", "# comment\n*.log\n!keep.log\n/root-only.txt\nbuild/\ndocs/**/draft.md\n\\#hash\n"),
		parseIgnore("sub", "local.txt\n/anchored.txt\n")...)
	cases := []struct {
		path    string
		dir     bool
		ignored bool
	}{
		{"app.log", false, true},
		{"a/b/app.log", false, true},
		{"keep.log", false, false},
		{"root-only.txt", false, true},
		{"a/root-only.txt", false, false},
		{"build", true, true},
		{"build", false, false},
		{"a/build", true, true},
		{"docs/draft.md", false, true},
		{"docs/x/y/draft.md", false, true},
		{"other/draft.md", false, false},
		{"#hash", false, true},
		{"sub/local.txt", false, true},
		{"sub/deeper/local.txt", false, true},
		{"local.txt", false, false},
		{"sub/anchored.txt", false, true},
		{"sub/deeper/anchored.txt", false, false},
		{"README.md", false, false},
	}
	for _, c := range cases {
		if got := rules.ignored(c.path, c.dir); got != c.ignored {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.ignored)
		}
	}
}
