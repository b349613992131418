// Package termbg settles the terminal's background colour without asking
// the terminal: from COLORFGBG, once, before the TUI starts. Bubble Tea v1
// queried it (OSC 11) in its package init at every start of every command;
// v2 asks only when a program requests it, which agentteam never does, so
// no terminal round trip is made at start (cmd's start-up test checks it).
package termbg

import (
	"os"
	"strings"
)

// Light guesses a light background from COLORFGBG ("15;0" is light text
// on black; a background of 7 or 15 is light); dark when unset.
func Light() bool {
	v := os.Getenv("COLORFGBG")
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false
	}
	switch v[i+1:] {
	case "7", "15":
		return true
	}
	return false
}
