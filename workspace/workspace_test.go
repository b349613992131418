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

// A cloned repository can ship .agentteam/, or one of its directories, as a
// link to anywhere. Init and CheckState refuse it, naming the path, and
// create nothing where it points.
func TestSymlinkedStateDirsAreRefused(t *testing.T) {
	cases := []struct {
		name string
		link func(ws *Workspace) string
	}{
		{".agentteam", (*Workspace).StatePath},
		{"inbox", (*Workspace).InboxDir},
		{"team", (*Workspace).TeamDir},
		{"sessions", (*Workspace).SessionsDir},
		{"tasks", (*Workspace).TasksDir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := openTemp(t)
			outside := t.TempDir()
			link := tc.link(ws)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			want := link + " is a symbolic link; agentteam keeps its state only in real directories: remove it"
			if err := ws.CheckState(); err == nil || err.Error() != want {
				t.Errorf("CheckState = %v, want %q", err, want)
			}
			if err := ws.Init(); err == nil || err.Error() != want {
				t.Errorf("Init = %v, want %q", err, want)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("Init created %d entries through the link in %s", len(entries), outside)
			}
		})
	}
}

// A state file that must be a real file (the event log, the registry, the
// task board) is refused as a link too.
func TestSymlinkedStateFilesAreRefused(t *testing.T) {
	for _, name := range []string{"events.jsonl", "team/config.json", "tasks/board.json"} {
		t.Run(name, func(t *testing.T) {
			ws := openTemp(t)
			if err := ws.Init(); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(ws.StatePath(), filepath.FromSlash(name))
			if err := os.Symlink(filepath.Join(t.TempDir(), "x"), link); err != nil {
				t.Fatal(err)
			}
			want := link + " is a symbolic link; agentteam keeps its state only in real files: remove it"
			if err := ws.CheckState(); err == nil || err.Error() != want {
				t.Errorf("CheckState = %v, want %q", err, want)
			}
			if err := ws.Init(); err == nil || err.Error() != want {
				t.Errorf("Init = %v, want %q", err, want)
			}
		})
	}
}

// A file where a state directory belongs is refused, and a workspace not
// initialised yet is fine for CheckState (there is nothing to trust yet).
func TestCheckStateOtherCases(t *testing.T) {
	ws := openTemp(t)
	if err := ws.CheckState(); err != nil {
		t.Fatalf("CheckState of a fresh workspace: %v", err)
	}
	if err := os.MkdirAll(ws.StatePath(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.InboxDir(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := ws.InboxDir() + " is not a directory; agentteam needs a directory there: move it away"
	if err := ws.Init(); err == nil || err.Error() != want {
		t.Errorf("Init = %v, want %q", err, want)
	}
	if err := ws.CheckState(); err == nil || err.Error() != want {
		t.Errorf("CheckState = %v, want %q", err, want)
	}
}
