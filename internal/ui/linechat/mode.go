package linechat

// Terminal is what decides between the full-screen TUI and the line chat.
type Terminal struct {
	// Term is $TERM.
	Term string
	// InTTY and OutTTY: standard input and output are terminals.
	InTTY, OutTTY bool
	// Plain is --plain or the config's [ui] plain = true.
	Plain bool
}

// Reason says why chat runs in lines, in a few words; "" when the
// full-screen TUI can run.
func (t Terminal) Reason() string {
	switch {
	case t.Plain:
		return "plain output was asked for"
	case !t.InTTY && !t.OutTTY:
		return "standard input and output are not a terminal"
	case !t.InTTY:
		return "standard input is not a terminal"
	case !t.OutTTY:
		return "standard output is not a terminal"
	case t.Term == "":
		return "TERM is not set"
	case t.Term == "dumb":
		return "TERM is dumb"
	}
	return ""
}
