package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	ws := openTemp(t)
	root := ws.Root
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(outside, "secret.txt"))
	mustWrite(t, filepath.Join(root, "src", "a.go"))
	mustLink(t, outside, filepath.Join(root, "outdir"))                                 // dir link leading out
	mustLink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))      // file link leading out
	mustLink(t, filepath.Join(root, "src"), filepath.Join(root, "srclink"))             // absolute link staying in
	mustLink(t, "src/a.go", filepath.Join(root, "alias.go"))                            // relative link staying in
	mustLink(t, "../"+filepath.Base(root)+"/src", filepath.Join(root, "roundtrip"))     // out and back in: never looked up above the root
	mustLink(t, filepath.Join(outside, "nothing.txt"), filepath.Join(root, "dangling")) // dangling, leading out

	tests := []struct {
		name, in string
		want     string // absolute result; "" means refused
	}{
		{"relative file", "src/a.go", filepath.Join(root, "src/a.go")},
		{"root itself", ".", root},
		{"dot segments inside", "src/../src/./a.go", filepath.Join(root, "src/a.go")},
		{"nested nonexistent", "new/deeper/f.txt", filepath.Join(root, "new/deeper/f.txt")},
		{"absolute inside", filepath.Join(root, "src/a.go"), filepath.Join(root, "src/a.go")},
		{"dotdot escape", "../x", ""},
		{"dotdot deep escape", "src/../../x", ""},
		{"absolute outside", filepath.Join(outside, "secret.txt"), ""},
		{"absolute root of fs", "/", ""},
		{"empty", "", ""},
		{"blank", "  ", ""},
		{"NUL", "a\x00b", ""},
		{"existing file through dir link", "outdir/secret.txt", ""},
		{"new file under dir link", "outdir/new.txt", ""},
		{"new nested under dir link", "outdir/a/b/new.txt", ""},
		{"file link leading out", "leak", ""},
		{"dir link itself", "outdir", ""},
		{"dangling link leading out", "dangling", ""},
		{"absolute link inside", "srclink/a.go", filepath.Join(root, "src/a.go")},
		{"new file under inside link", "srclink/new.go", filepath.Join(root, "src/new.go")},
		{"relative link inside", "alias.go", filepath.Join(root, "src/a.go")},
		{"link out and back in", "roundtrip/a.go", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ws.Resolve(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Resolve(%q) = %s, want refusal", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("Resolve(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestIsState(t *testing.T) {
	ws := openTemp(t)
	tests := []struct {
		rel  string
		want bool
	}{
		{".agentteam", true},
		{".agentteam/inbox/lead.jsonl", true},
		{".agentteam/team/config.json", true},
		{".agentteamx/f", false},
		{".agentteam.bak", false},
		{"src/.agentteam/f", false},
		{"src/a.go", false},
		{".", false},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			if got := ws.IsState(filepath.Join(ws.Root, filepath.FromSlash(tc.rel))); got != tc.want {
				t.Fatalf("IsState(%s) = %v, want %v", tc.rel, got, tc.want)
			}
		})
	}
	if ws.IsState(filepath.Join(filepath.Dir(ws.Root), StateDir)) {
		t.Fatal("a .agentteam outside the workspace counts as state")
	}
}

// On a case-insensitive file system (macOS, Windows) .AGENTTEAM is
// .agentteam, so the state check ignores case, and it cleans the path first.
func TestIsStateIgnoresCaseAndDotSegments(t *testing.T) {
	ws := openTemp(t)
	tests := []struct {
		rel  string // joined to the root by hand, so it is not cleaned before IsState
		want bool
	}{
		{".AGENTTEAM", true},
		{".AGENTTEAM/x", true},
		{".AgentTeam/inbox/lead.jsonl", true},
		{".agentTEAM/team/config.json", true},
		{"./.AgentTeam/../.agentteam/x", true},
		{"sub/../.AGENTTEAM/x", true},
		{"./sub/./../.Agentteam/x", true},
		{".AGENTTEAM/../src/x", false},
		{".AGENTTEAMX/f", false},
		{".AgentTeam.bak/f", false},
		{"src/.AGENTTEAM/f", false},
		{"../" + filepath.Base(ws.Root) + "/.AGENTTEAM/x", true},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			abs := ws.Root + string(filepath.Separator) + filepath.FromSlash(tc.rel)
			if got := ws.IsState(abs); got != tc.want {
				t.Fatalf("IsState(%s) = %v, want %v", abs, got, tc.want)
			}
		})
	}
}

// The write tools resolve a path, then ask IsState: the pair must refuse
// every spelling of the state directory a model might try.
func TestResolvedStatePathsAreState(t *testing.T) {
	ws := openTemp(t)
	if err := os.MkdirAll(filepath.Join(ws.Root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".AGENTTEAM/x",
		"./.AGENTTEAM/x",
		"./.AgentTeam/../.agentteam/x",
		"sub/../.AGENTTEAM/x",
		"sub/../.AgentTeam/inbox/lead.jsonl",
		filepath.Join(ws.Root, ".AgentTeam", "team", "config.json"),
	} {
		t.Run(p, func(t *testing.T) {
			abs, err := ws.Resolve(p)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", p, err)
			}
			if !ws.IsState(abs) {
				t.Fatalf("Resolve(%q) = %s, which IsState does not protect", p, abs)
			}
		})
	}
}

func mustWrite(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
