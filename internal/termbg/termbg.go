// Package termbg settles the terminal's background colour without asking
// the terminal. Bubble Tea v1's package init calls
// lipgloss.HasDarkBackground, which, when stdout is a terminal, writes an
// OSC 11 query and waits for the answer: a round trip at every start of
// every agentteam command, five seconds and escape codes in the output when
// the terminal does not answer (script(1), some CI and serial consoles).
//
// This package's init runs before Bubble Tea's: Go initialises, of the
// packages whose imports are done, the first by import path, and this
// package imports only what lipgloss does, and "github.com/agentteam/…"
// sorts before "github.com/charmbracelet/bubbletea". It sets the
// background explicitly from COLORFGBG, which makes Bubble Tea's call a
// lookup. main imports it so that every build of the binary links it.
package termbg

import (
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

func init() {
	lipgloss.SetHasDarkBackground(!Light())
}

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
