package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/team/registry"
)

// TestTeamShowsAHostileRoleAsText: a role in the registry (written by a
// model's spawn, another process or a person) that carries escape
// sequences, a carriage return, a tab and a newline reaches the terminal as
// one line of text in its cell: no ESC, CR or BEL, nothing past the
// newline, and the columns after it where the header puts them.
func TestTeamShowsAHostileRoleAsText(t *testing.T) {
	ws := t.TempDir()
	ownState(t, ws) // a registry of this user's that a model filled
	reg := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "")
	now := time.Now().UTC()
	// On a terminal this would clear the screen, home the cursor and
	// overwrite the row with "idle" under another name; U+202E would
	// show the rest of the row reversed.
	role := "dev\x1b[2J\x1b[H\rmallory\tX\x07\u202e\nsecond line"
	err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates,
			registry.Member{Name: "alice", Role: role, Status: registry.StatusIdle, PID: os.Getpid(), CreatedAt: now, UpdatedAt: now},
			registry.Member{Name: "bob", Role: "reviewer", Status: registry.StatusIdle, PID: os.Getpid(), CreatedAt: now, UpdatedAt: now})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := runBin(t, ws, nil, "", "team")
	mustSucceed(t, r, "team")
	if strings.ContainsAny(r.stdout, "\x1b\r\x07\u202e") {
		t.Errorf("team prints the role's control characters raw:\n%q", r.stdout)
	}
	if strings.Contains(r.stdout, "second line") {
		t.Errorf("team prints the role past its first line:\n%q", r.stdout)
	}
	lines := strings.Split(r.stdout, "\n")
	// Cells are counted in runes (the role's cut ends in "…").
	status := len([]rune(lines[0][:max(strings.Index(lines[0], "STATUS"), 0)]))
	if !strings.HasPrefix(lines[0], "NAME") || status == 0 {
		t.Fatalf("no table header first:\n%s", r.stdout)
	}
	var rows int
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "alice ") && !strings.HasPrefix(l, "bob ") {
			continue
		}
		rows++
		if strings.HasPrefix(l, "alice ") && !strings.Contains(l, "dev?[2J?[H?mallory?X??") {
			t.Errorf("alice's role is not shown as text with '?' for its control characters:\n%q", l)
		}
		if rs := []rune(l); len(rs) < status || !strings.HasPrefix(string(rs[status:]), "idle ") {
			t.Errorf("the status column is shifted in %q (header %q)", l, lines[0])
		}
	}
	if rows != 2 {
		t.Errorf("want one row each for alice and bob, got %d:\n%s", rows, r.stdout)
	}
}

// TestTeamShowsHostileModelAndErrorAsText: a teammate's model and a
// failed one's error come from the registry too (any worker writes it);
// neither reaches the terminal with its control characters, nor past its
// first line. (A working teammate's activity goes through the same cell;
// with no team running, `team` shows it failed, so it is not shown here.)
func TestTeamShowsHostileModelAndErrorAsText(t *testing.T) {
	ws := t.TempDir()
	ownState(t, ws) // a registry of this user's that a model filled
	reg := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "")
	now := time.Now().UTC()
	hostile := "x\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\r\u202emallory\nsecond line"
	err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates,
			registry.Member{Name: "alice", Role: "dev", Status: registry.StatusIdle, ModelRef: registry.ModelRef{Model: hostile}, PID: os.Getpid(), CreatedAt: now, UpdatedAt: now},
			registry.Member{Name: "bob", Role: "dev", Status: registry.StatusFailed, Error: hostile, CreatedAt: now, UpdatedAt: now})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := runBin(t, ws, nil, "", "team")
	mustSucceed(t, r, "team")
	if strings.ContainsAny(r.stdout, "\x1b\r\x07\u202e") {
		t.Errorf("team prints a model's or an error's control characters raw:\n%q", r.stdout)
	}
	if strings.Contains(r.stdout, "second line") {
		t.Errorf("team prints a model or an error past its first line:\n%q", r.stdout)
	}
	if strings.Count(r.stdout, "mallory") != 2 {
		t.Errorf("want the model and the error shown as text, once each:\n%s", r.stdout)
	}
}
