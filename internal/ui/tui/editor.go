package tui

import (
	"errors"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
	"mvdan.cc/sh/v3/shell"
)

// editorMsg is what the person wrote in their editor, or why it failed.
type editorMsg struct {
	text string
	err  error
}

// maxEditorBytes bounds what is read back from the editor's file.
const maxEditorBytes = 1 << 20

// editInput opens the input's text in the person's editor ($VISUAL, else
// $EDITOR, else vi), the TUI suspended meanwhile; what they save becomes
// the input, to send with enter.
func (m *Model) editInput() tea.Cmd {
	f, err := os.CreateTemp("", "agentteam-prompt-*.md")
	if err != nil {
		m.hint = "no file for the editor: " + err.Error()
		return nil
	}
	path := f.Name()
	_, werr := f.WriteString(m.in.value())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		m.hint = "no file for the editor: " + werr.Error()
		return nil
	}
	editor := os.Getenv("VISUAL")
	if strings.TrimSpace(editor) == "" {
		editor = os.Getenv("EDITOR")
	}
	if strings.TrimSpace(editor) == "" {
		editor = "vi"
	}
	// $EDITOR may carry arguments ("code --wait"), as shells read it.
	words, err := shell.Fields(editor, func(string) string { return "" })
	if err != nil || len(words) == 0 {
		os.Remove(path)
		m.hint = "the editor " + editor + " is not a command line"
		return nil
	}
	c := exec.Command(words[0], append(words[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorMsg{err: err}
		}
		data, err := readBounded(path, maxEditorBytes)
		return editorMsg{text: strings.TrimRight(string(data), "\n"), err: err}
	})
}

// readBounded reads at most limit bytes of path, refusing a larger file.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("the editor left no plain file")
	}
	if fi.Size() > limit {
		return nil, errors.New("what the editor saved is over 1 MiB: attach a file with @path instead")
	}
	data := make([]byte, fi.Size())
	n, err := f.Read(data)
	if err != nil && n < len(data) {
		return nil, err
	}
	return data[:n], nil
}

// edited takes the editor's text into the input.
func (m *Model) edited(msg editorMsg) {
	if msg.err != nil {
		m.hint = "the editor: " + msg.err.Error()
		return
	}
	m.in.set(msg.text)
	m.hint = "from your editor: enter sends it"
}
