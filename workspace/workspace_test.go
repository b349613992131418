package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		wantRoot  string
		wantErr   string
	}{
		{"existing dir", dir, real, ""},
		{"symlink is resolved", link, real, ""},
		{"missing", filepath.Join(dir, "nope"), "", "does not exist"},
		{"file", file, "", "is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Open(tc.dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Open(%s) error = %v, want %q", tc.dir, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ws.Root != tc.wantRoot {
				t.Fatalf("Root = %s, want %s", ws.Root, tc.wantRoot)
			}
		})
	}
}

func TestOpenEmptyIsCurrentDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ws, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if ws.Root != real {
		t.Fatalf("Root = %s, want %s", ws.Root, real)
	}
}

func TestInitLayout(t *testing.T) {
	ws := openTemp(t)
	for range 2 { // Init is idempotent
		if err := ws.Init(); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{ws.InboxDir(), ws.TeamDir(), ws.SessionsDir(), ws.TasksDir()} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Fatalf("%s missing after Init: %v", d, err)
		}
	}
	paths := []struct{ got, rel string }{
		{ws.InboxDir(), ".agentteam/inbox"},
		{ws.RegistryPath(), ".agentteam/team/config.json"},
		{ws.SessionPath("alice"), ".agentteam/sessions/alice.jsonl"},
		{ws.EventsPath(), ".agentteam/events.jsonl"},
	}
	for _, p := range paths {
		if want := filepath.Join(ws.Root, filepath.FromSlash(p.rel)); p.got != want {
			t.Errorf("path %s, want %s", p.got, want)
		}
	}
}

func openTemp(t *testing.T) *Workspace {
	t.Helper()
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
