package tui

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// osc52 is the escape sequence that asks the terminal to put text on the
// system clipboard ("c"). It travels with the program's output, so it works
// over ssh and in tmux (with set-clipboard on).
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\x07"
}

// copyTo writes text's OSC 52 sequence to the terminal in one write, so it
// is not cut by a frame written at the same time.
func copyTo(w io.Writer, text string) error {
	if _, err := io.WriteString(w, osc52(text)); err != nil {
		return fmt.Errorf("cannot write to the terminal: %w", err)
	}
	return nil
}

// lastReply is the text of the newest agent reply in a pane: the lead's last
// reply, or the focused teammate's last message. A finished reply is
// preferred to one still arriving.
func lastReply(p *convPane) string {
	streaming := ""
	for i := len(p.entries) - 1; i >= 0; i-- {
		e := p.entries[i]
		if e.kind != entryReply || strings.TrimSpace(e.text) == "" {
			continue
		}
		if !e.streaming {
			return e.text
		}
		if streaming == "" {
			streaming = e.text
		}
	}
	return streaming
}

// copyCommand is /copy: the shown conversation's last reply goes to the
// clipboard, written by a job (the terminal is IO).
func (m *Model) copyCommand() {
	who := "the lead's"
	if m.mate != nil {
		who = m.mate.name + "'s"
	}
	text := lastReply(m.pane())
	if text == "" {
		m.note(noteMsg{text: "nothing to copy yet: " + who + " conversation has no reply", isErr: true})
		return
	}
	w := m.opts.Clipboard
	if w == nil {
		m.note(noteMsg{text: "no terminal to copy to", isErr: true})
		return
	}
	done := fmt.Sprintf("copied %s last reply (%s) with OSC 52; a terminal that refuses clipboard writes ignores it", who, plural(len([]rune(text)), "character"))
	m.do(func() tea.Msg {
		if err := copyTo(w, text); err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return hintMsg(done)
	})
}

// mouseCommand is /mouse [on|off]: with the mouse captured the wheel
// scrolls the conversation; released (the default), the terminal selects
// text.
func (m *Model) mouseCommand(c command) {
	switch strings.ToLower(c.rest) {
	case "on":
		m.mouse = true
	case "off":
		m.mouse = false
	case "":
		m.mouse = !m.mouse
	default:
		m.note(noteMsg{text: "/mouse takes on or off", isErr: true})
		return
	}
	if m.mouse {
		m.cmds = append(m.cmds, tea.EnableMouseCellMotion)
		m.hint = "mouse on: the wheel scrolls; /mouse off to select text with the mouse"
	} else {
		m.cmds = append(m.cmds, tea.DisableMouse)
		m.hint = "mouse off: the terminal selects text (pgup/pgdn scroll); /mouse on for the wheel"
	}
}
