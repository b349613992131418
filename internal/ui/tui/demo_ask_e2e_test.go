package tui

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// In the offline demo a teammate told to run a command asks the person
// first, in the TUI, with the keys to answer: the command runs only after y.
// The lead's answers show each report as an item of its own.
func TestTheDemosCommandAsksThePersonInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws, home := t.TempDir(), t.TempDir()
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " " + bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "Messages"))
	s.typeLine("spawn bob as tester to run: echo ran > ran.txt")
	s.waitFor("bob's ask with its keys", contains("bob asks to run bash echo ran > ran.txt", "allow once", "deny"))
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran before the person answered: %v", err)
	}
	s.run("send-keys", "-t", "e2e", "y")
	// The lead's answers list what it did and what the team said, each
	// report an item of its own (they once ran into one bullet).
	s.waitFor("the lead's summary, a bullet a line", contains("• spawn bob as tester: done",
		"• bob: done — ready — ran echo ran > ran.txt"))
	if got, err := os.ReadFile(filepath.Join(ws, "ran.txt")); err != nil || string(got) != "ran\n" {
		t.Fatalf("ran.txt = %q, %v after y", got, err)
	}
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
}
