package tui

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// TestColourProfileHonoursNoColorAndCI: a 256-colour terminal keeps its
// colours; NO_COLOR, a set CI (as termenv decided for Bubble Tea v1) and a
// dumb terminal take them away.
func TestColourProfileHonoursNoColorAndCI(t *testing.T) {
	tty := []string{"TTY_FORCE=1", "TERM=xterm-256color"} // colorprofile's way to call a buffer a terminal
	cases := []struct {
		name   string
		env    []string
		colour bool
	}{
		{"a terminal", tty, true},
		{"NO_COLOR", append(tty, "NO_COLOR=1"), false},
		{"CI", append(tty, "CI=true"), false},
		{"CI empty", append(tty, "CI="), true},
		{"dumb", []string{"TTY_FORCE=1", "TERM=dumb"}, false},
		{"not a terminal", []string{"TERM=xterm-256color"}, false},
	}
	for _, c := range cases {
		p := ColourProfile(&bytes.Buffer{}, c.env)
		if got := p > colorprofile.ASCII; got != c.colour {
			t.Errorf("%s: profile %v, colour %v, want %v", c.name, p, got, c.colour)
		}
	}
}
