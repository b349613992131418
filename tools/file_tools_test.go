package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func call(t *testing.T, env Env, tool string, args map[string]string) Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return ForTeammate(env).Call(context.Background(), tool, string(b))
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadFile(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	writeTestFile(t, filepath.Join(root, "src", "a.go"), "package a\n")
	writeTestFile(t, filepath.Join(root, "empty.txt"), "")
	writeTestFile(t, filepath.Join(root, "bin.dat"), "ELF\x00\x01")
	writeTestFile(t, filepath.Join(root, ".agentteam", "inbox", "lead.jsonl"), `{"id":"1"}`+"\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTestFile(t, outside, "secret")
	if err := os.Symlink(outside, filepath.Join(root, "leak")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		ok         bool
		want       string
	}{
		{"relative", "src/a.go", true, "package a\n"},
		{"absolute inside", filepath.Join(root, "src/a.go"), true, "package a\n"},
		{"state is readable", ".agentteam/inbox/lead.jsonl", true, `{"id":"1"}` + "\n"},
		{"empty file", "empty.txt", true, "(empty.txt is empty)"},
		{"missing", "nope.txt", false, "file nope.txt does not exist"},
		{"directory", "src", false, "src is a directory"},
		{"binary", "bin.dat", false, "bin.dat is a binary file"},
		{"escape", "../secret.txt", false, "outside the workspace"},
		{"absolute outside", outside, false, "outside the workspace"},
		{"symlink out", "leak", false, "leads outside the workspace"},
		{"empty path", "", false, "path is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, env, "read_file", map[string]string{"path": tc.path})
			if tc.ok {
				mustOK(t, r, tc.want)
				if r.Content != tc.want {
					t.Fatalf("content = %q, want exactly %q", r.Content, tc.want)
				}
				return
			}
			mustErr(t, r, tc.want)
			if strings.Contains(strings.ReplaceAll(r.Content, "secret.txt", ""), "secret") {
				t.Fatalf("outside content leaked: %q", r.Content)
			}
		})
	}
}

func TestReadFileCap(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.OutputCap = 100
	body := strings.Repeat("h", 50) + strings.Repeat("m", 1000) + strings.Repeat("t", 50)
	writeTestFile(t, filepath.Join(env.Workspace.Root, "big.txt"), body)
	r := call(t, env, "read_file", map[string]string{"path": "big.txt"})
	want := strings.Repeat("h", 50) + "\n\n[... 1000 bytes cut from the middle ...]\n\n" + strings.Repeat("t", 50)
	if r.IsError || r.Content != want {
		t.Fatalf("got %q", r.Content)
	}
}

func TestWriteFile(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	r := call(t, env, "write_file", map[string]string{"path": "deep/new/dir/f.txt", "content": "héllo"})
	mustOK(t, r, "Wrote 6 bytes to deep/new/dir/f.txt")
	if got := readTestFile(t, filepath.Join(root, "deep/new/dir/f.txt")); got != "héllo" {
		t.Fatalf("file = %q", got)
	}
	// Overwrite keeps the mode and leaves no temp files behind.
	exe := filepath.Join(root, "run.sh")
	writeTestFile(t, exe, "old")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, env, "write_file", map[string]string{"path": "run.sh", "content": ""}), "Wrote 0 bytes")
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 || fi.Mode().Perm() != 0o755 {
		t.Fatalf("after overwrite: size %d mode %v", fi.Size(), fi.Mode().Perm())
	}
	fi, err = os.Stat(filepath.Join(root, "deep/new/dir/f.txt"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode = %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

func TestWriteFileRefusals(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	outDir := t.TempDir()
	if err := os.Symlink(outDir, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, ".agentteam"), filepath.Join(root, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, ".git", "hooks"), filepath.Join(root, "h")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"git hook", ".git/hooks/pre-commit", "is git's own"},
		{"git config", ".git/config", "is git's own"},
		{"hook via symlink", "h/pre-commit", "is git's own"},
		{"a worktree's .git file", ".git", "is git's own"},
		{"a nested repository's, in another case", "sub/.GIT/config", "is git's own"},
		{"state dir file", ".agentteam/inbox/lead.jsonl", "inside .agentteam/"},
		{"state dir itself", ".agentteam", "inside .agentteam/"},
		{"state via symlink", "state/team/config.json", "inside .agentteam/"},
		{"escape", "../x.txt", "outside the workspace"},
		{"new file under linked dir", "out/x.txt", "leads outside the workspace"},
		{"directory", "adir", "adir is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustErr(t, call(t, env, "write_file", map[string]string{"path": tc.path, "content": "x"}), tc.want)
		})
	}
	if _, err := os.Stat(filepath.Join(outDir, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file was written outside the workspace (stat err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".agentteam/inbox/lead.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("a file was written in .agentteam (stat err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git/hooks/pre-commit")); !os.IsNotExist(err) {
		t.Fatalf("a hook was written (stat err %v)", err)
	}
	mustErr(t, ForTeammate(env).Call(context.Background(), "write_file", `{"path":"a.txt"}`), `missing required argument "content"`)
}

func TestEditFile(t *testing.T) {
	env, _, _, _ := testEnv(t)
	path := filepath.Join(env.Workspace.Root, "main.go")
	writeTestFile(t, path, "func a() {}\nfunc b() {}\n")
	mustOK(t, call(t, env, "edit_file", map[string]string{"path": "main.go", "old_text": "func b() {}", "new_text": "func c() {}"}), "Replaced 1 occurrence in main.go")
	if got := readTestFile(t, path); got != "func a() {}\nfunc c() {}\n" {
		t.Fatalf("file = %q", got)
	}
	mustOK(t, call(t, env, "edit_file", map[string]string{"path": "main.go", "old_text": "func a() {}\n", "new_text": ""}), "Replaced")
	if got := readTestFile(t, path); got != "func c() {}\n" {
		t.Fatalf("after delete: %q", got)
	}
}

func TestEditFileRefusals(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	const orig = "x = 1\nx = 1\ny = 2\n"
	writeTestFile(t, filepath.Join(root, "f.txt"), orig)
	writeTestFile(t, filepath.Join(root, "bin"), "a\x00b")
	writeTestFile(t, filepath.Join(root, ".agentteam", "team", "config.json"), `{"version":1}`)
	writeTestFile(t, filepath.Join(root, ".git", "config"), "[core]\n")
	tests := []struct {
		name string
		args map[string]string
		want string
	}{
		{"zero occurrences", map[string]string{"path": "f.txt", "old_text": "z = 3", "new_text": "q"}, "not found in f.txt (0 occurrences)"},
		{"two occurrences", map[string]string{"path": "f.txt", "old_text": "x = 1", "new_text": "q"}, "occurs 2 times in f.txt"},
		{"empty old_text", map[string]string{"path": "f.txt", "old_text": "", "new_text": "q"}, `"old_text" must not be empty`},
		{"missing new_text", map[string]string{"path": "f.txt", "old_text": "y = 2"}, `missing required argument "new_text"`},
		{"missing file", map[string]string{"path": "g.txt", "old_text": "a", "new_text": "b"}, "g.txt does not exist"},
		{"binary", map[string]string{"path": "bin", "old_text": "a", "new_text": "b"}, "binary file"},
		{"state dir", map[string]string{"path": ".agentteam/team/config.json", "old_text": "1", "new_text": "2"}, "inside .agentteam/"},
		{"git config", map[string]string{"path": ".git/config", "old_text": "[core]", "new_text": "[core]\nhooksPath = /tmp"}, "is git's own"},
		{"escape", map[string]string{"path": "../f.txt", "old_text": "a", "new_text": "b"}, "outside the workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustErr(t, call(t, env, "edit_file", tc.args), tc.want)
		})
	}
	if got := readTestFile(t, filepath.Join(root, "f.txt")); got != orig {
		t.Fatalf("a refused edit changed the file: %q", got)
	}
	if got := readTestFile(t, filepath.Join(root, ".agentteam", "team", "config.json")); got != `{"version":1}` {
		t.Fatalf("state file changed: %q", got)
	}
}

// On a case-insensitive file system .AGENTTEAM/x is agentteam's own state:
// the write tools refuse every spelling of it, dot segments included.
func TestWriteToolsRefuseStateInAnyCase(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What .AgentTeam/team/config.json would be on macOS; on Linux a twin.
	const config = `{"version":1}`
	writeTestFile(t, filepath.Join(root, ".AgentTeam", "team", "config.json"), config)
	tests := []struct {
		tool string
		args map[string]string
	}{
		{WriteFileName, map[string]string{"path": ".AGENTTEAM/x", "content": "x"}},
		{WriteFileName, map[string]string{"path": "./.AGENTTEAM/x", "content": "x"}},
		{WriteFileName, map[string]string{"path": "./.AgentTeam/../.agentteam/x", "content": "x"}},
		{WriteFileName, map[string]string{"path": "sub/../.AGENTTEAM/x", "content": "x"}},
		{WriteFileName, map[string]string{"path": filepath.Join(root, ".Agentteam", "inbox", "lead.jsonl"), "content": "x"}},
		{WriteFileName, map[string]string{"path": ".AgentTeam/team/config.json", "content": "x"}},
		{EditFileName, map[string]string{"path": ".AgentTeam/team/config.json", "old_text": "1", "new_text": "2"}},
		{EditFileName, map[string]string{"path": "sub/../.AgentTeam/team/config.json", "old_text": "1", "new_text": "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args["path"], func(t *testing.T) {
			mustErr(t, call(t, env, tc.tool, tc.args), "inside .agentteam/")
		})
	}
	for _, dir := range []string{".AGENTTEAM", ".Agentteam"} {
		if _, err := os.Stat(filepath.Join(root, dir)); !os.IsNotExist(err) {
			t.Errorf("%s was created (stat err %v)", dir, err)
		}
	}
	if got := readTestFile(t, filepath.Join(root, ".AgentTeam", "team", "config.json")); got != config {
		t.Errorf(".AgentTeam/team/config.json changed: %q", got)
	}
}
