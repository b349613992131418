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

// edit opens the input's text in the person's editor ($VISUAL, else
// $EDITOR, else vi), the TUI suspended meanwhile; what they save becomes
// the input, to send with enter. hint says why it did not open.
func (in *input) edit() (cmd tea.Cmd, hint string) {
	f, err := os.CreateTemp("", "agentteam-prompt-*.md")
	if err != nil {
		return nil, "no file for the editor: " + err.Error()
	}
	path := f.Name()
	_, werr := f.WriteString(in.value())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, "no file for the editor: " + werr.Error()
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
		return nil, "the editor " + editor + " is not a command line"
	}
	c := exec.Command(words[0], append(words[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorMsg{err: err}
		}
		data, err := readBounded(path, maxEditorBytes)
		return editorMsg{text: strings.TrimRight(string(data), "\n"), err: err}
	}), ""
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

// edited takes the editor's text into the input; the hint says so.
func (in *input) edited(msg editorMsg) string {
	if msg.err != nil {
		return "the editor: " + msg.err.Error()
	}
	in.set(msg.text)
	return "from your editor: enter sends it"
}
