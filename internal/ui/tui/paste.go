package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// A paste longer than these shows in the input as one short token, such as
// "[pasted 30 lines]"; what is sent is the paste whole.
const (
	pasteMaxLines = 10
	pasteMaxChars = 2000
)

// paste is a collapsed paste: its token in the input and its text.
type paste struct {
	token, text string
}

// pasteToken is the short stand-in for a long paste; "" if text is short
// enough to show as it is.
func pasteToken(text string) string {
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	switch {
	case lines > pasteMaxLines:
		return fmt.Sprintf("[pasted %d lines]", lines)
	case len([]rune(text)) > pasteMaxChars:
		return fmt.Sprintf("[pasted %d characters]", len([]rune(text)))
	}
	return ""
}

// pasteLong puts a long paste in the input as its token and keeps the
// text for submit; it reports false for a paste short enough to show.
func (in *input) pasteLong(text string) bool {
	token := pasteToken(text)
	if token == "" {
		return false
	}
	for _, p := range in.pastes {
		if p.token == token {
			// Each token names one paste, so that each is sent where it was put.
			token = strings.TrimSuffix(token, "]") + fmt.Sprintf(" #%d]", len(in.pastes)+1)
			break
		}
	}
	in.pastes = append(in.pastes, paste{token: token, text: text})
	in.ta.InsertString(token)
	return true
}

// expand puts the pastes' texts where their tokens are, in one pass, so a
// paste that holds another's token is sent as it was pasted.
func (in *input) expand(s string) string {
	if len(in.pastes) == 0 {
		return s
	}
	pairs := make([]string, 0, 2*len(in.pastes))
	for _, p := range in.pastes {
		pairs = append(pairs, p.token, p.text)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// paste takes a bracketed paste: one message whatever line endings it
// brought, a long one collapsed to its token. Like a key, it clears the
// hint and starts the pop-up over.
func (m *Model) paste(text string) {
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	m.hint = ""
	before := m.in.value()
	if !m.in.pasteLong(text) {
		m.in.ta, _ = m.in.ta.Update(tea.PasteMsg{Content: text})
	}
	if m.in.value() != before {
		m.pop.sel = -1
		m.pop.closed = ""
	}
	m.pop.wantListing()
}
