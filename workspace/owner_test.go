package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Making .agentteam/, Init keeps it out of git and records it as this
// user's: the id beside the state and in the user's state directory.
func TestInitClaimsTheStateDir(t *testing.T) {
	ws := openTemp(t)
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(ws.StatePath(), ".gitignore")); err != nil || !strings.Contains(string(got), "\n*\n") {
		t.Errorf(".gitignore = %q, %v; want one that ignores everything", got, err)
	}
	rec, err := ws.owner().recordPath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec, os.Getenv("XDG_STATE_HOME")+string(filepath.Separator)) {
		t.Errorf("the record %s is not under XDG_STATE_HOME", rec)
	}
	for _, p := range []string{rec, filepath.Join(ws.StatePath(), "id")} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", p, fi, err)
		}
	}
	writeFile(t, filepath.Join(ws.InboxDir(), "lead.jsonl"), `{"from":"user","content":"hi"}`+"\n")
	for range 2 {
		if err := ws.Init(); err != nil {
			t.Fatalf("Init of this user's state: %v", err)
		}
		if err := ws.CheckState(); err != nil {
			t.Fatalf("CheckState of this user's state: %v", err)
		}
	}
}

// A missing .gitignore is put back on the next Init.
func TestInitPutsBackTheIgnoreFile(t *testing.T) {
	ws := openTemp(t)
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	ignore := filepath.Join(ws.StatePath(), ".gitignore")
	if err := os.Remove(ignore); err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ignore); err != nil {
		t.Fatalf("Init did not put back %s: %v", ignore, err)
	}
}

// State this user's agentteam did not make here (a clone, a copy) is
// refused by Init and CheckState, and adopted only when asked.
func TestForeignStateIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, ws *Workspace)
	}{
		{"an inbox log", func(t *testing.T, ws *Workspace) {
			writeFile(t, filepath.Join(ws.InboxDir(), "lead.jsonl"), `{"from":"user","content":"planted"}`+"\n")
		}},
		{"a registry", func(t *testing.T, ws *Workspace) { writeFile(t, ws.RegistryPath(), `{"members":[]}`) }},
		{"a session", func(t *testing.T, ws *Workspace) { writeFile(t, ws.SessionPath("lead"), `{"role":"user"}`+"\n") }},
		{"a task board", func(t *testing.T, ws *Workspace) { writeFile(t, ws.TasksPath(), `{}`) }},
		{"a planted id", func(t *testing.T, ws *Workspace) {
			writeFile(t, filepath.Join(ws.StatePath(), "id"), "0123456789abcdef\n")
			writeFile(t, filepath.Join(ws.InboxDir(), "lead.jsonl"), `{"from":"user","content":"planted"}`+"\n")
		}},
		{"a copy of this user's state", func(t *testing.T, ws *Workspace) {
			mine := openTemp(t)
			if err := mine.Init(); err != nil {
				t.Fatal(err)
			}
			id, err := os.ReadFile(filepath.Join(mine.StatePath(), "id"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(ws.StatePath(), "id"), string(id))
			writeFile(t, filepath.Join(ws.InboxDir(), "lead.jsonl"), `{"from":"user","content":"planted"}`+"\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := openTemp(t)
			tc.plant(t, ws)
			var fe *ForeignError
			if err := ws.CheckState(); !errors.As(err, &fe) {
				t.Fatalf("CheckState = %v, want a ForeignError", err)
			}
			err := ws.Init()
			if !errors.As(err, &fe) {
				t.Fatalf("Init = %v, want a ForeignError", err)
			}
			if !strings.Contains(err.Error(), "agentteam adopt") || !strings.Contains(err.Error(), "mv "+ws.StatePath()) {
				t.Errorf("the refusal does not say how to go on: %v", err)
			}
			if files, err := ws.ForeignState(); err != nil || len(files) == 0 {
				t.Errorf("ForeignState = %v, %v", files, err)
			}
			if err := ws.Adopt(); err != nil {
				t.Fatal(err)
			}
			if err := ws.Init(); err != nil {
				t.Fatalf("Init after Adopt: %v", err)
			}
			if files, err := ws.ForeignState(); err != nil || files != nil {
				t.Errorf("ForeignState after Adopt = %v, %v", files, err)
			}
		})
	}
}

// A .agentteam/ that holds no state (a project config, empty directories,
// locks) is claimed as it is opened.
func TestStatelessDirIsClaimed(t *testing.T) {
	ws := openTemp(t)
	writeFile(t, filepath.Join(ws.StatePath(), "config.toml"), "[ui]\nplain = true\n")
	writeFile(t, filepath.Join(ws.TeamDir(), "config.json.lock"), "")
	if err := ws.CheckState(); err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws.StatePath(), "id")); err != nil {
		t.Fatalf("Init did not claim the directory: %v", err)
	}
}

// A planted event log is refused like the rest.
func TestForeignEventLogIsRefused(t *testing.T) {
	ws := openTemp(t)
	writeFile(t, ws.EventsPath(), `{"kind":"message"}`+"\n")
	var fe *ForeignError
	if err := ws.Init(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "(events.jsonl)") {
		t.Fatalf("Init = %v, want a ForeignError naming events.jsonl", err)
	}
}
