package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
)

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

// copy is /copy: the shown conversation's last reply goes to the
// clipboard as an OSC 52 sequence, which travels with the program's output,
// so it works over ssh and in tmux (with set-clipboard on).
func (cm *commander) copy() {
	m := cm.m
	who := "the lead's"
	if m.mate != nil {
		who = m.mate.name + "'s"
	}
	text := lastReply(m.pane())
	if text == "" {
		m.note(noteMsg{text: "nothing to copy yet: " + who + " conversation has no reply", isErr: true})
		return
	}
	done := hintMsg(fmt.Sprintf("copied %s last reply (%s) with OSC 52; a terminal that refuses clipboard writes ignores it", who, draw.Plural(len([]rune(text)), "character")))
	// In order: Bubble Tea queues the sequence for its output before the
	// hint that says so can reach the screen.
	m.cmds = append(m.cmds, tea.Sequence(tea.SetClipboard(text), func() tea.Msg { return done }))
}

// mouse is /mouse [on|off]: with the mouse captured the wheel
// scrolls the conversation; released (the default), the terminal selects
// text.
func (cm *commander) mouse(c engine.Command) {
	m := cm.m
	switch strings.ToLower(c.Rest) {
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
	// View captures the mouse or not from m.mouse.
	if m.mouse {
		m.hint = "mouse on: the wheel scrolls; /mouse off to select text with the mouse"
	} else {
		m.hint = "mouse off: the terminal selects text (pgup/pgdn scroll); /mouse on for the wheel"
	}
}
