package atpath

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/workspace"
)

// What one message may carry: at most MaxFiles files, each cut after
// MaxFileBytes, and MaxTotal of them in all (the lead is
// told how much of a file it did not get).
const (
	MaxFiles     = 8
	MaxFileBytes = 64 << 10
	MaxTotal     = 192 << 10
)

// regularFile is the start of a regular file: at most the limit asked
// for, and the file's whole size.
type regularFile struct {
	data []byte
	size int64
}

// readRegular reads at most limit bytes of the regular file ws has at
// p, reached beneath its root (workspace.Place): a link cannot lead
// elsewhere, and a FIFO is opened without blocking, found to be one and
// closed unread (a *workspace.NotRegularError).
func readRegular(ws *workspace.Workspace, p string, limit int64) (regularFile, error) {
	pl, err := ws.Place(p)
	if err != nil {
		return regularFile{}, err
	}
	defer pl.Close()
	return readPlace(pl, limit)
}

// readPlace reads at most limit bytes of the regular file at pl.
func readPlace(pl *workspace.Place, limit int64) (regularFile, error) {
	f, fi, err := pl.OpenRegular()
	if err != nil {
		return regularFile{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return regularFile{}, err
	}
	return regularFile{data: data, size: fi.Size()}, nil
}

// atToken is an @path in what the person typed: at the start or after a
// space, up to the next space.
var atToken = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// Tokens are the @paths of text, each once, in order.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range atToken.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// attachment is one file put in a message, or why it was not.
type attachment struct {
	path    string // as the person typed it
	text    string // what the lead gets
	lines   int    // of text
	size    int64  // of the whole file
	refused string // the sentence that says why it is not attached
}

// attachFile reads the file the person named with @token, confined to the
// workspace like the file tools' paths. ok is false for a word that names
// nothing and does not look like a path (an @name, say): it is just text.
// At most limit bytes of it are read.
func attachFile(ws *workspace.Workspace, token string, limit int64) (a attachment, ok bool) {
	a.path = token
	pl, err := ws.Place(token)
	if err != nil {
		// Trailing punctuation is the sentence's, not the name's: "see @a.go."
		if t := strings.TrimRight(token, ".,;:!?)'\""); t != token && t != "" {
			if b, ok := attachFile(ws, t, limit); ok && b.refused == "" {
				return b, true
			}
		}
		a.refused = fmt.Sprintf("@%s is not attached: %v.", token, err)
		return a, true
	}
	f, err := readPlace(pl, limit)
	pl.Close()
	var nr *workspace.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		if t := strings.TrimRight(token, ".,;:!?)'\""); t != token && t != "" {
			if b, ok := attachFile(ws, t, limit); ok && b.refused == "" {
				return b, true
			}
		}
		if !strings.ContainsAny(token, "/.") {
			return a, false
		}
		a.refused = fmt.Sprintf("@%s is not attached: there is no such file in the workspace.", token)
	case errors.As(err, &nr):
		if nr.Mode.IsDir() {
			a.refused = fmt.Sprintf("@%s is not attached: it is a directory (name a file in it).", token)
		} else {
			a.refused = fmt.Sprintf("@%s is not attached: it is not a regular file.", token)
		}
	case err != nil:
		a.refused = fmt.Sprintf("@%s is not attached: %s.", token, errText(err))
	default:
		data := f.data
		if int64(len(data)) < f.size {
			// The cut may split a character: keep only whole ones.
			for i := 1; i < utf8.UTFMax && len(data) > 0; i++ {
				if r, n := utf8.DecodeLastRune(data); r != utf8.RuneError || n != 1 {
					break
				}
				data = data[:len(data)-1]
			}
		}
		if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
			a.refused = fmt.Sprintf("@%s is not attached: it is a binary file, not text.", token)
			return a, true
		}
		a.text, a.size = string(data), f.size
		a.lines = strings.Count(a.text, "\n")
		if a.text != "" && !strings.HasSuffix(a.text, "\n") {
			a.lines++
		}
	}
	return a, true
}

// exists reports whether p names a file of ws.
func exists(ws *workspace.Workspace, p string) bool {
	pl, err := ws.Place(p)
	if err != nil {
		return false
	}
	defer pl.Close()
	_, err = pl.Mode()
	return err == nil
}

// cut is how much of the file the lead did not get, in words; "" if none.
func (a attachment) cut() string {
	if int64(len(a.text)) >= a.size {
		return ""
	}
	return fmt.Sprintf("the first %s of %s", draw.Bytes(int64(len(a.text))), draw.Bytes(a.size))
}

// fileTag finds anything in a file's text that could read as the start of
// an attachment's frame, so that a file cannot end its frame early and
// speak as the person.
var fileTag = regexp.MustCompile(`(?i)<(\s*/?\s*attached_file\b)`)

// frame is the attachment as the lead reads it.
func (a attachment) frame() string {
	head := fmt.Sprintf(`<attached_file path="%s" lines="%d"`, attrEscape(filepath.ToSlash(a.path)), a.lines)
	if c := a.cut(); c != "" {
		head += fmt.Sprintf(` cut="only %s is here"`, c)
	}
	body := fileTag.ReplaceAllString(a.text, "&lt;$1")
	return head + ">\n" + strings.TrimSuffix(body, "\n") + "\n</attached_file>"
}

var attrEscaper = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;", "\n", " ")

func attrEscape(s string) string { return attrEscaper.Replace(s) }

// Report says what Attach attached to a message, and what it did not and why.
type Report struct {
	Attached, Refused []string
}

// Attach is text with each of tokens (the @paths typed) that
// names a regular file of the workspace framed after it, the files' text
// at most budget bytes in all, and the lines that say what happened. It
// does file IO: it runs in a job.
func Attach(root, text string, tokens []string, budget int) (string, Report) {
	var am Report
	if len(tokens) == 0 || root == "" {
		return text, am
	}
	ws, err := workspace.Open(root)
	if err != nil {
		am.Refused = append(am.Refused, "Nothing is attached: "+err.Error()+".")
		return text, am
	}
	var frames []string
	for _, tok := range tokens {
		if budget <= 0 || len(frames) == MaxFiles {
			if exists(ws, tok) {
				am.Refused = append(am.Refused, fmt.Sprintf("@%s is not attached: a message carries at most %d files and %s of them.", tok, MaxFiles, draw.Bytes(MaxTotal)))
			}
			continue
		}
		a, ok := attachFile(ws, tok, int64(min(budget, MaxFileBytes)))
		switch {
		case !ok:
			continue
		case a.refused != "":
			am.Refused = append(am.Refused, a.refused)
			continue
		}
		budget -= len(a.text)
		frames = append(frames, a.frame())
		line := fmt.Sprintf("attached %s (%s)", a.path, draw.Plural(a.lines, "line"))
		if c := a.cut(); c != "" {
			line = fmt.Sprintf("attached %s (%s, cut: the lead gets %s)", a.path, draw.Plural(a.lines, "line"), c)
		}
		am.Attached = append(am.Attached, line)
	}
	if len(frames) == 0 {
		return text, am
	}
	return text + "\n\n" + strings.Join(frames, "\n\n"), am
}

// frameHeadLine is the opening line frame writes, its path and lines.
var frameHeadLine = regexp.MustCompile(`^<attached_file path="([^"]*)" lines="(\d+)"( cut="[^"]*")?>\n`)

// Split takes the frames Attach put after a message
// off its end, for a conversation read back from its file: the text as
// typed, and the lines that say what was attached.
func Split(content string) (string, []string) {
	var lines []string
	for strings.HasSuffix(content, "\n</attached_file>") {
		i := strings.LastIndex(content, "\n\n<attached_file ")
		if i < 0 {
			break
		}
		head := frameHeadLine.FindStringSubmatch(content[i+2:])
		if head == nil {
			break
		}
		line := fmt.Sprintf("attached %s (%s lines)", html.UnescapeString(head[1]), head[2])
		if head[2] == "1" {
			line = fmt.Sprintf("attached %s (1 line)", html.UnescapeString(head[1]))
		}
		if head[3] != "" {
			line = strings.TrimSuffix(line, ")") + ", cut)"
		}
		lines = append([]string{line}, lines...)
		content = content[:i]
	}
	return content, lines
}
