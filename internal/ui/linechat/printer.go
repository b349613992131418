package linechat

import (
	"io"
	"strings"
	"sync"
	"unicode"
)

// printer writes the chat's output: whole lines, and the lead's reply as it
// streams. Agents' goroutines and the session print through it at once, so
// it keeps track of a line left open by streamed text or the prompt and
// closes it before a line of its own. Nothing it writes holds a control
// character: a model's escape sequence never reaches the terminal.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	midLine  bool // the last thing written did not end a line
	atPrompt bool // the prompt is the last thing written
	// reprompt: output came while the person was at the prompt; the
	// prompt is shown again once that output has ended its line.
	reprompt bool
	// streaming: a reply is being written; it ends with endReply.
	streaming bool
	// held are lines of other agents that came while the reply's line was
	// open: written once that line ends, so a reply's line is never cut.
	held []string
}

// prompt is what the chat shows when it waits for the person.
const prompt = "lead> "

func (p *printer) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	p.flushHeld()
	io.WriteString(p.w, clean(s)+"\n")
	p.promptAgain()
}

// aside writes a line of another agent than the lead: at once, unless the
// lead's reply is in the middle of a line, which it then waits for.
func (p *printer) aside(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.streaming && p.midLine {
		p.held = append(p.held, clean(s))
		return
	}
	p.endLine()
	io.WriteString(p.w, clean(s)+"\n")
	p.promptAgain()
}

// text writes streamed text as it comes; lines held meanwhile follow the
// first line it ends.
func (p *printer) text(s string) {
	s = clean(s)
	if s == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.atPrompt {
		p.endLine()
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && len(p.held) > 0 {
		io.WriteString(p.w, s[:i+1])
		p.flushHeld()
		s = s[i+1:]
	}
	if s != "" {
		io.WriteString(p.w, s)
		p.midLine = !strings.HasSuffix(s, "\n")
	}
	p.streaming = true
}

// flushHeld writes the held lines; the reply's line has just ended.
func (p *printer) flushHeld() {
	for _, l := range p.held {
		io.WriteString(p.w, l+"\n")
	}
	p.held = nil
	p.midLine = false
}

// endReply ends the lead's reply: the line its streamed text left open,
// then last, when not "", on a line of its own.
func (p *printer) endReply(last string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.streaming = false
	p.endLine()
	p.flushHeld()
	if last != "" {
		io.WriteString(p.w, clean(last)+"\n")
	}
	p.promptAgain()
}

// leave ends the last line for good: nothing waits at a prompt any more.
func (p *printer) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	p.flushHeld()
	p.reprompt = false
}

// showPrompt writes the prompt on a line of its own; echo, when the
// input is not a terminal that echoes it, is written after it.
func (p *printer) showPrompt() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.atPrompt {
		return
	}
	p.endLine()
	p.flushHeld()
	io.WriteString(p.w, prompt)
	p.midLine, p.atPrompt, p.reprompt, p.streaming = true, true, false, false
}

// entered is told a line was read: a terminal's echo of the person's enter
// ended the prompt's line; a pipe's line is echoed after the prompt.
func (p *printer) entered(line string, echo bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.atPrompt {
		return
	}
	if echo {
		io.WriteString(p.w, clean(line)+"\n")
	}
	p.midLine, p.atPrompt, p.reprompt = false, false, false
}

func (p *printer) endLine() {
	if p.midLine {
		io.WriteString(p.w, "\n")
	}
	p.reprompt = p.reprompt || p.atPrompt
	p.midLine, p.atPrompt = false, false
}

// promptAgain shows the prompt again after output that came while the
// person was at it, but not in the middle of a reply.
func (p *printer) promptAgain() {
	if p.reprompt && !p.streaming {
		io.WriteString(p.w, prompt)
		p.midLine, p.atPrompt, p.reprompt = true, true, false
	}
}

// clean shows control characters but the newline and the tab as '?' (a
// carriage return is dropped): the escape of a colour or a cursor move is
// written as text, never obeyed.
func clean(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return -1
		case isControl(r):
			return '?'
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || r == 0x7f)
}
