package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestATeammatesWriteShowsAsADiffInTmux: through the real program, a
// teammate's write_file shows in the lead's conversation as one folded
// line; ctrl+g shows its + lines, in colour unless NO_COLOR is set; its
// own conversation (focus) shows the write the same way.
func TestATeammatesWriteShowsAsADiffInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	for _, noColor := range []bool{false, true} {
		name := "colour"
		if noColor {
			name = "NO_COLOR"
		}
		t.Run(name, func(t *testing.T) {
			srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
				"lead": {
					{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"alice","role":"writer","prompt":"write the notes"}`}}},
					{Content: "alice is on it"},
				},
				"alice": {
					{ToolCalls: []fakellm.ToolCall{{Name: "write_file", Args: `{"path":"notes.txt","content":"hello from alice\nsecond line\n"}`}}},
					{Content: "the notes are written"},
				},
			}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "noted"} }), fakellm.WithAPIKey("k"))
			defer srv.Close()
			ws, home := t.TempDir(), t.TempDir()
			s := startTmux(t, ws)
			env := "HOME=" + home + " OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m TERM=xterm-256color "
			if noColor {
				env += "NO_COLOR=1 "
			}
			s.typeLine(env + bin + " chat --permission-mode auto-edit")
			s.waitFor("the TUI", contains("Team", "Messages"))

			s.typeLine("get the notes written")
			screen := s.waitFor("alice's write, folded", contains("✎ alice wrote notes.txt (+2 −0) · ctrl+g shows it"))
			if strings.Contains(screen, "+hello from alice") {
				t.Fatalf("the diff is shown before ctrl+g:\n%s", screen)
			}
			if got, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(got) != "hello from alice\nsecond line\n" {
				t.Fatalf("notes.txt = %q, %v", got, err)
			}

			s.run("send-keys", "-t", "e2e", "C-g")
			s.waitFor("the diff's + lines", contains("✎ alice wrote notes.txt (+2 −0)", "+hello from alice", "+second line"))
			coloured := s.run("capture-pane", "-p", "-e", "-t", "e2e")
			line := ""
			for _, l := range strings.Split(coloured, "\n") {
				if strings.Contains(l, "hello from alice") && !strings.Contains(l, "notes.txt") {
					line = l
				}
			}
			// The conversation is the left column: what styles the line is before its text.
			hasColour := sgrColour(line[:max(strings.Index(line, "hello from alice"), 0)])
			if noColor && hasColour {
				t.Fatalf("NO_COLOR is set, yet the added line is coloured: %q", line)
			}
			if !noColor && !hasColour {
				t.Fatalf("the added line is not coloured: %q", line)
			}

			// alice's own conversation shows the write the same way.
			s.run("send-keys", "-t", "e2e", "Tab")
			s.waitFor("alice's conversation with the write", contains("alice · ", "✎ wrote notes.txt (+2 −0)", "+hello from alice"))

			s.run("send-keys", "-t", "e2e", "C-c")
			s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
			if v := srv.Violations(); len(v) > 0 {
				t.Fatal(v)
			}
		})
	}
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m")

// sgrColour reports whether s sets a foreground or background colour.
func sgrColour(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, err := strconv.Atoi(p)
			if err == nil && (n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107) {
				return true
			}
		}
	}
	return false
}

// gitWorkspace is a git repository with notes.txt committed on main.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main"}, {"config", "user.name", "Tester"}, {"config", "user.email", "tester@example.com"},
		{"add", "-A"}, {"commit", "--quiet", "-m", "start"},
	} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = ws, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}

// TestFocusShowsAWorktreeTeammatesBranchDiffInTmux: through the real
// program and git, focusing a teammate that works in its own worktree shows
// its branch's diff against the lead's branch, and the diff is read again
// when the teammate reports (its report commits its work).
func TestFocusShowsAWorktreeTeammatesBranchDiffInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	queue := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"alice","role":"writer","prompt":"sign line two","isolation":"worktree"}`}}},
			{Content: "alice is on it"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{{Name: "edit_file", Args: `{"path":"notes.txt","old_text":"two","new_text":"two, signed by alice"}`}}},
			{Content: "line two is signed"},
		},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "noted"} })
	// alice's report waits until the test has focused her.
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" && c.N == 1 {
			select {
			case <-release:
			case <-time.After(60 * time.Second):
			}
		}
		return queue(c)
	}, fakellm.WithAPIKey("k"))
	defer srv.Close()
	ws, home := gitWorkspace(t), t.TempDir()
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " OPENAI_API_KEY=k OPENAI_BASE_URL=" + srv.URL() + " AGENTTEAM_MODEL=m " + bin + " chat --permission-mode auto-edit")
	s.waitFor("the TUI", contains("Team", "Messages"))
	s.typeLine("get line two signed")
	// In her worktree, auto-edit lets the edit run without asking.
	s.waitFor("alice's edit in the lead's conversation", contains("✎ alice edited notes.txt (+1 −1)"))

	s.run("send-keys", "-t", "e2e", "Tab")
	s.waitFor("alice's branch, nothing committed yet", contains("branch agentteam/alice against the lead's branch",
		"alice's branch has no changes against the merge base", "not committed yet (committed when alice reports): notes.txt"))
	close(release)
	released = true
	s.waitFor("alice's branch diff after her report", contains("branch agentteam/alice against the lead's branch", "notes.txt | 2 +-",
		"-two", "+two, signed by alice", "✎ edited notes.txt (+1 −1)", "line two is signed"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}
