package tui

import (
	"regexp"
	"testing"
)

// TestShiftEnterMakesANewLineInTmux: where the terminal tells shift+enter
// from enter (tmux with extended-keys on sends it as CSI 13;2u once the
// program asks for keyboard enhancements, as Bubble Tea v2 does), shift+enter
// makes a new line in the input instead of sending; ctrl+j and alt+enter
// still do; enter sends the lines as one message. At 120×40 and 80×24.
func TestShiftEnterMakesANewLineInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	for _, size := range [][2]string{{"120", "40"}, {"80", "24"}} {
		t.Run(size[0]+"x"+size[1], func(t *testing.T) {
			s := startTmux(t, t.TempDir())
			s.run("set-option", "-s", "extended-keys", "on")
			s.run("resize-window", "-t", "e2e", "-x", size[0], "-y", size[1])
			s.typeLine(bin + " chat --demo")
			s.waitFor("the TUI", contains("Team", "lead · idle"))

			s.run("send-keys", "-t", "e2e", "-l", "alpha")
			s.run("send-keys", "-t", "e2e", "S-Enter")
			s.run("send-keys", "-t", "e2e", "-l", "beta")
			// Sent by shift+enter, alpha would leave the input for the conversation.
			s.waitFor("alpha and beta on two lines of the input", regexp.MustCompile(`┃ alpha\s*\n\s*┃ beta`).MatchString)
			s.run("send-keys", "-t", "e2e", "Enter")
			sent := regexp.MustCompile(`(?m)^  alpha\b.*\n  beta\b`)
			s.waitFor("alpha and beta sent as one message", sent.MatchString)

			s.run("send-keys", "-t", "e2e", "-l", "gamma")
			s.run("send-keys", "-t", "e2e", "C-j")
			s.run("send-keys", "-t", "e2e", "-l", "delta")
			s.run("send-keys", "-t", "e2e", "M-Enter")
			s.run("send-keys", "-t", "e2e", "-l", "epsilon")
			s.waitFor("ctrl+j and alt+enter's new lines", regexp.MustCompile(`┃ gamma\s*\n\s*┃ delta\s*\n\s*┃ epsilon`).MatchString)
			s.run("send-keys", "-t", "e2e", "Enter")
			three := regexp.MustCompile(`(?m)^  gamma\b.*\n  delta\b.*\n  epsilon\b`)
			s.waitFor("gamma, delta and epsilon sent as one message", three.MatchString)

			s.run("send-keys", "-t", "e2e", "C-c")
			s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
		})
	}
}
