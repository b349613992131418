package tui

import (
	"context"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team"
)

// sessionPicker is the list `chat --resume` shows when there is more than
// one conversation to go back to: up/down choose, enter opens, esc leaves.
type sessionPicker struct {
	list   []team.SessionInfo
	cursor int
	chosen string
	width  int
	height int
}

func newSessionPicker(list []team.SessionInfo) sessionPicker {
	return sessionPicker{list: list, width: 80, height: 24}
}

func (p sessionPicker) Init() tea.Cmd { return nil }

func (p sessionPicker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width, p.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k", "shift+tab":
			if p.cursor > 0 {
				p.cursor--
			}
		case "down", "j", "tab":
			if p.cursor < len(p.list)-1 {
				p.cursor++
			}
		case "home", "g":
			p.cursor = 0
		case "end", "G":
			p.cursor = len(p.list) - 1
		case "enter":
			if len(p.list) > 0 {
				p.chosen = p.list[p.cursor].ID
			}
			return p, tea.Quit
		case "esc", "q", "ctrl+c":
			p.chosen = ""
			return p, tea.Quit
		}
	}
	return p, nil
}

func (p sessionPicker) View() tea.View {
	v := tea.NewView(p.render())
	v.AltScreen = true
	return v
}

func (p sessionPicker) render() string {
	var b strings.Builder
	b.WriteString(pickerCut("Resume which conversation with the lead?  ↑/↓ choose · enter opens · esc leaves", p.width) + "\n\n")
	first, last := p.window()
	for i := first; i < last; i++ {
		s := p.list[i]
		mark := "  "
		if i == p.cursor {
			mark = "> "
		}
		id := s.ID
		if s.Current {
			id = "current"
		}
		line := fmt.Sprintf("%s%-19s  %s  %4d msgs  %s", mark, id, s.Time.Local().Format("2006-01-02 15:04"), s.Messages, s.Title)
		b.WriteString(pickerCut(line, p.width))
		b.WriteByte('\n')
	}
	if first > 0 || last < len(p.list) {
		fmt.Fprintf(&b, "  (%d–%d of %d)\n", first+1, last, len(p.list))
	}
	// No newline after the last line: it would take a row of its own and
	// push the title off a full terminal.
	return strings.TrimRight(b.String(), "\n")
}

// window is the part of the list that fits the terminal, the cursor in it.
func (p sessionPicker) window() (first, last int) {
	rows := p.height - 3 // the title, a blank line, the count
	if rows < 1 {
		rows = 1
	}
	if len(p.list) <= rows {
		return 0, len(p.list)
	}
	first = p.cursor - rows/2
	if first < 0 {
		first = 0
	}
	if first+rows > len(p.list) {
		first = len(p.list) - rows
	}
	return first, first + rows
}

// pickerCut cuts s to w cells (titles are single-width text already cleaned).
func pickerCut(s string, w int) string {
	r := []rune(s)
	if w <= 1 || len(r) <= w {
		return s
	}
	return string(r[:w-1]) + "…"
}

// PickSession shows the picker and returns the id chosen, or "" when the
// person left without choosing.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, list []team.SessionInfo) (string, error) {
	p := tea.NewProgram(newSessionPicker(list), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	m, err := p.Run()
	if err != nil {
		return "", fmt.Errorf("session picker: %w", err)
	}
	return m.(sessionPicker).chosen, nil
}

// sessionSwitchedMsg is the lead's conversation after /sessions ID.
type sessionSwitchedMsg struct {
	note string
	msgs []openai.ChatCompletionMessage
	list []team.SessionInfo // the sessions after the switch, for completion
}

// sessionsListedMsg is /sessions alone: the list as a note, and the ids
// kept for completing /sessions ID.
type sessionsListedMsg struct {
	text string
	list []team.SessionInfo
}

// sessionItems are the earlier conversations offered for /sessions ID.
func (m *Model) sessionItems(prefix string) []popItem {
	var out []popItem
	for _, s := range m.sessions {
		if !s.Current && strings.HasPrefix(s.ID, prefix) {
			out = append(out, popItem{label: s.ID, desc: s.Title, value: s.ID, final: true})
		}
	}
	return out
}

// sessionSwitched shows the conversation switched to in place of the lead's pane.
func (m *Model) sessionSwitched(s sessionSwitchedMsg) {
	if s.list != nil {
		m.sessions = s.list
	}
	m.lead.clear()
	m.history(historyMsg{msgs: s.msgs})
	m.lead.add(&entry{kind: entryNote, text: s.note})
	m.lead.follow = true
}
