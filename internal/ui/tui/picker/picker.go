package picker

import (
	"context"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team/sessions"
)

// model is the list `chat --resume` shows when there is more than
// one conversation to go back to: up/down choose, enter opens, esc leaves.
type model struct {
	list   []sessions.Info
	cursor int
	chosen string
	width  int
	height int
}

func newModel(list []sessions.Info) model {
	return model{list: list, width: 80, height: 24}
}

func (p model) Init() tea.Cmd { return nil }

func (p model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
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

func (p model) View() tea.View {
	v := tea.NewView(p.render())
	v.AltScreen = true
	return v
}

func (p model) render() string {
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
func (p model) window() (first, last int) {
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

// Pick shows the picker and returns the id chosen, or "" when the
// person left without choosing.
func Pick(ctx context.Context, in io.Reader, out io.Writer, list []sessions.Info) (string, error) {
	p := tea.NewProgram(newModel(list), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	m, err := p.Run()
	if err != nil {
		return "", fmt.Errorf("session picker: %w", err)
	}
	return m.(model).chosen, nil
}
