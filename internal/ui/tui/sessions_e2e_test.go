package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/workspace"
)

// agentteamSessions is `agentteam sessions --json` in ws.
func agentteamSessions(t *testing.T, bin, ws string) []sessions.Info {
	t.Helper()
	out, err := exec.Command(bin, "sessions", "--json", "--workspace", ws).Output()
	if err != nil {
		t.Fatalf("sessions --json: %v", err)
	}
	var list []sessions.Info
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	return list
}

// TestChatResumePicksAnEarlierSessionInTmux: two headless runs leave one
// current and one archived conversation; chat --resume shows the picker,
// the archived one is chosen and opens in the TUI, the one it replaced is
// archived; chat --resume ID then goes straight back to that one.
func TestChatResumePicksAnEarlierSessionInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	for _, prompt := range []string{"alpha marker", "beta marker"} {
		if out, err := exec.Command(bin, "run", "--demo", "--quiet", "--workspace", ws, prompt).CombinedOutput(); err != nil {
			t.Fatalf("run %q: %v\n%s", prompt, err, out)
		}
	}
	list := agentteamSessions(t, bin, ws)
	if len(list) != 2 || list[0].Title != "beta marker" || list[1].Title != "alpha marker" {
		t.Fatalf("sessions before: %+v", list)
	}

	s := startTmux(t, ws)
	// esc leaves the picker and opens nothing.
	s.typeLine(bin + " chat --demo --resume")
	s.waitFor("the picker", contains("Resume which conversation", "beta marker", "alpha marker"))
	s.run("send-keys", "-t", "e2e", "Escape")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	s.typeLine("echo picker-exit=$?")
	s.waitFor("the exit code", contains("no conversation chosen", "picker-exit=0"))
	s.typeLine("clear")
	s.waitFor("a clear screen", func(screen string) bool {
		return lastLine(screen) == prompt && !strings.Contains(screen, "picker-exit")
	})

	s.typeLine(bin + " chat --demo --resume")
	s.waitFor("the picker", contains("> current", "beta marker", "alpha marker"))
	s.run("send-keys", "-t", "e2e", "Down")
	s.waitFor("the cursor on the archive", contains("> "+list[1].ID))
	s.run("send-keys", "-t", "e2e", "Enter")
	screen := s.waitFor("the TUI with the chosen conversation", contains("Messages", "alpha marker"))
	if strings.Contains(screen, "beta marker") {
		t.Fatalf("the replaced conversation is on screen:\n%s", screen)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })

	after := agentteamSessions(t, bin, ws)
	if len(after) != 2 || !after[0].Current || after[0].Title != "alpha marker" || after[1].Title != "beta marker" {
		t.Fatalf("sessions after choosing alpha: %+v", after)
	}

	// Straight back to beta by its id, no picker.
	s.typeLine("clear")
	s.typeLine(bin + " chat --demo --resume " + after[1].ID)
	screen = s.waitFor("the TUI with beta", contains("Messages", "beta marker"))
	if strings.Contains(screen, "Resume which") || strings.Contains(screen, "alpha marker") {
		t.Fatalf("picker or alpha on screen:\n%s", screen)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	final := agentteamSessions(t, bin, ws)
	if len(final) != 2 || final[0].Title != "beta marker" || final[1].Title != "alpha marker" {
		t.Fatalf("sessions after resuming beta: %+v", final)
	}
}

// TestChatResumePickerAt80x24InTmux: thirty earlier conversations with
// long titles fit an 80×24 terminal: the list scrolls, no line wraps.
func TestChatResumePickerAt80x24InTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := t.TempDir()
	// The conversations are this user's, as if earlier chats had made them.
	w, err := workspace.Open(ws)
	if err == nil {
		err = w.Init()
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, ".agentteam", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		line := fmt.Sprintf(`{"role":"user","content":"conversation %02d %s"}`+"\n", i, strings.Repeat("with a long title ", 6))
		name := fmt.Sprintf("lead.20261120T0900%02d.000.jsonl", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startTmux(t, ws)
	s.run("resize-window", "-t", "e2e", "-x", "80", "-y", "24")
	s.typeLine(bin + " chat --demo --resume")
	screen := s.waitFor("the picker", contains("Resume which conversation", "of 30)"))
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "with a long title") && !strings.HasSuffix(strings.TrimRight(l, " "), "…") {
			t.Fatalf("a title not cut to the width:\n%s", screen)
		}
	}
	s.run("send-keys", "-t", "e2e", "G")
	s.waitFor("the oldest at the end", contains("> 20261120T090000.000"))
	s.run("send-keys", "-t", "e2e", "Escape")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}

// TestChatSessionsCommandSwitchesInTmux: two earlier chats with the lead,
// then in a third `/sessions` lists them and `/sessions ID` switches to the
// first: its prompt shows, and the next request the model gets carries that
// conversation, not the one in between.
func TestChatSessionsCommandSwitchesInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		last := c.Req.Messages[len(c.Req.Messages)-1]
		return fakellm.Reply{Content: "answered: " + last.Content}
	})
	defer srv.Close()
	home, ws := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=", "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + srv.URL(), "AGENTTEAM_MODEL=fake-model"}
	for _, p := range []string{"alpha marker", "beta marker"} {
		cmd := exec.Command(bin, "run", "--quiet", "--workspace", ws, p)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run %q: %v\n%s", p, err, out)
		}
	}
	before := agentteamSessions(t, bin, ws)
	if len(before) != 2 || before[1].Title != "alpha marker" {
		t.Fatalf("sessions before: %+v", before)
	}
	alpha := before[1].ID

	s := startTmux(t, ws)
	s.typeLine(strings.Join(env, " ") + " " + bin + " chat")
	s.waitFor("the TUI", contains("Team", "lead · "))
	s.typeLine("/sessions")
	s.waitFor("the list", contains(alpha, "alpha marker", "beta marker", "/sessions ID switches"))
	s.typeLine("/sessions " + alpha)
	screen := s.waitFor("alpha's conversation", contains("switched the lead to conversation "+alpha, "answered: alpha marker"))
	if strings.Contains(screen, "answered: beta marker") {
		t.Fatalf("beta's conversation is still on screen:\n%s", screen)
	}
	s.typeLine("gamma marker")
	s.waitFor("the answer", contains("answered: gamma marker"))
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })

	reqs := srv.Requests("lead")
	var sent strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		sent.WriteString(m.Role + ": " + m.Content + "\n")
	}
	for _, want := range []string{"alpha marker", "answered: alpha marker", "gamma marker"} {
		if !strings.Contains(sent.String(), want) {
			t.Fatalf("the request after the switch lacks %q:\n%s", want, sent.String())
		}
	}
	if strings.Contains(sent.String(), "beta marker") {
		t.Fatalf("the request after the switch carries beta's conversation:\n%s", sent.String())
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	// The third chat's own conversation was empty when it switched: nothing
	// to keep, so alpha is current and beta the one earlier conversation.
	after := agentteamSessions(t, bin, ws)
	if len(after) != 2 || !after[0].Current || after[0].Title != "alpha marker" || after[1].Title != "beta marker" {
		t.Fatalf("sessions after: %+v", after)
	}
}
