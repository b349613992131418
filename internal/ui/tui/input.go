package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"

	"github.com/agentteam/agentteam/internal/ui/tui/atpath"
)

// inputHeight is the rows of the input box.
const inputHeight = 3

// input is the multi-line message box with history.
type input struct {
	ta      textarea.Model
	history []string
	hpos    int          // index into history while browsing; len(history) when not
	draft   string       // what was typed before browsing began
	pastes  []paste      // long pastes shown as a token until submit (paste.go)
	paths   atpath.Cache // directories listed for @path completion (atpath)
	// attach are the @paths of the message submit took, as the input
	// showed them: one inside a collapsed paste is not the person's to attach.
	attach []string
}

// newInput is the box; root is the workspace @path completes in ("": none),
// light picks the styles of a light background.
func newInput(root string, light bool) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "┃ "
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetHeight(inputHeight)
	st := textarea.DefaultStyles(!light)
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.Base = lipgloss.NewStyle()
	st.Blurred.Base = lipgloss.NewStyle()
	ta.SetStyles(st)
	// enter sends; ctrl+j and alt+enter (how many terminals send shift+enter)
	// make a new line, and shift+enter where the terminal tells it apart
	// (Bubble Tea v2 asks for keyboard enhancements: the kitty protocol,
	// xterm's modifyOtherKeys).
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("ctrl+j", "alt+enter", "shift+enter"))
	ta.Focus()
	return input{ta: ta, paths: atpath.Cache{Root: root}}
}

func (in *input) setWidth(w int) { in.ta.SetWidth(max(w, 10)) }

func (in *input) value() string { return in.ta.Value() }

func (in *input) empty() bool { return strings.TrimSpace(in.ta.Value()) == "" }

func (in *input) set(s string) {
	in.ta.SetValue(s)
	in.ta.CursorEnd()
}

// submit takes the text, remembers it in the history and empties the box.
func (in *input) submit() string {
	in.attach = atpath.Tokens(in.ta.Value())
	text := strings.TrimSpace(in.expand(in.ta.Value()))
	if text != "" && (len(in.history) == 0 || in.history[len(in.history)-1] != text) {
		in.history = append(in.history, text)
	}
	in.hpos, in.draft, in.pastes = len(in.history), "", nil
	in.paths.Reset() // the next @path sees the files as they are then
	in.ta.Reset()
	return text
}

// onFirstLine and onLastLine decide when up/down browse history instead of moving the cursor.
func (in *input) onFirstLine() bool { return in.ta.Line() == 0 && in.ta.LineInfo().RowOffset == 0 }

func (in *input) onLastLine() bool {
	li := in.ta.LineInfo()
	return in.ta.Line() == in.ta.LineCount()-1 && li.RowOffset == li.Height-1
}

// recalled reports whether the input is a history entry as recalled.
func (in *input) recalled() bool {
	return in.hpos < len(in.history) && in.ta.Value() == in.history[in.hpos]
}

// older shows the previous history entry; false if there is none.
func (in *input) older() bool {
	if in.hpos == 0 || len(in.history) == 0 {
		return false
	}
	if in.hpos == len(in.history) {
		in.draft = in.ta.Value()
	}
	in.hpos--
	in.set(in.history[in.hpos])
	return true
}

// newer shows the next history entry, then the draft; false at the end.
func (in *input) newer() bool {
	if in.hpos >= len(in.history) {
		return false
	}
	in.hpos++
	if in.hpos == len(in.history) {
		in.set(in.draft)
	} else {
		in.set(in.history[in.hpos])
	}
	return true
}
