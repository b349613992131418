package tui

import (
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/tools"
)

// entryKind is what a line of the conversation is.
type entryKind int

const (
	entryUser   entryKind = iota // the person said it (to the lead, or to a teammate's inbox)
	entryReply                   // an agent's reply, markdown
	entryTool                    // one tool call, one line
	entryReport                  // a message that reached the lead (or the focused teammate), marked with the sender
	entryNote                    // the program says something: help, a command's output
	entryError                   // something failed
	entryPlan                    // a teammate's plan waiting for approval (or answered)
	entryWrite                   // a write_file / edit_file call that went well, with its diff (writes.go)
	entryBranch                  // a worktree teammate's branch against the lead's (focus, branchdiff.go)
)

// entry is one item of a conversation pane, with its rendering cached per width.
type entry struct {
	kind      entryKind
	who, typ  string // speaker or sender; message type of a report
	text      string
	reasoning string // a reply's thinking (reasoning_content), shown dimmed
	tool, arg string
	done      bool // a tool call has its result
	isErr     bool
	streaming bool      // a reply still arriving
	answer    string    // how a plan request was answered; "" while it waits
	diff      string    // a branch's diffstat and patch
	write     shownDiff // a write's diff
	args      string    // a write's arguments, to find its diff when its result comes

	width    int
	expand   bool // the cache was rendered with tool results expanded
	thinking bool // … and with reasoning shown whole
	diffs    bool // … and with writes' diffs shown whole
	lines    []string
	// The stable prefix of a streaming reply, rendered once per change.
	prefixLen   int
	prefixWidth int
	prefixLines []string
}

// renderer turns entries into lines.
type renderer struct {
	st     draw.Styles
	md     *draw.Markdown
	expand bool // show tool calls' results, not just ok/error
	// thinking shows replies' reasoning whole; otherwise one line says how long it is.
	thinking bool
	// diffs shows writes' diffs whole; otherwise one line says what changed.
	diffs bool
}

// lines of e at width w; cached unless e is still streaming.
func (r *renderer) lines(e *entry, w int) []string {
	if e.streaming {
		return r.streamLines(e, w)
	}
	if e.lines != nil && e.width == w && e.expand == r.expand && e.thinking == r.thinking && e.diffs == r.diffs {
		return e.lines
	}
	e.width, e.expand, e.thinking, e.diffs, e.lines = w, r.expand, r.thinking, r.diffs, r.render(e, w)
	return e.lines
}

// invalidate drops the cache after e changed.
func (e *entry) invalidate() { e.lines = nil }

func (r *renderer) render(e *entry, w int) []string {
	st := r.st
	// Two columns of indent, and two of margin so no text touches the
	// divider at the pane's right edge.
	body := max(w-4, 10)
	switch e.kind {
	case entryTool:
		out := []string{r.toolLine(e, w)}
		if r.expand && e.done && strings.TrimSpace(e.text) != "" {
			out = append(out, r.toolResult(e.text, w)...)
		}
		return out
	case entryUser:
		head := st.User.Render("you")
		if e.who != "" {
			head += st.Dim.Render(" → " + e.who)
		}
		return append([]string{"", head}, draw.Indent(draw.Wrap(e.text, body), "  ")...)
	case entryReply:
		out := append([]string{"", st.Who.Render(e.who)}, r.reasoningLines(e.reasoning, w)...)
		return append(out, r.md.Render(e.text, w)...)
	case entryReport:
		head := st.Who.Render(e.who) + st.Dim.Render(" → "+e.typ)
		return append([]string{"", head}, r.md.Render(e.text, w)...)
	case entryError:
		return append([]string{""}, draw.Indent(draw.Wrap("! "+e.text, body), "  ", st.ErrText)...)
	case entryPlan:
		return r.planLines(e, w)
	case entryWrite:
		return r.writeLines(e, w)
	case entryBranch:
		return r.branchLines(e, w)
	default:
		return append([]string{""}, draw.Indent(draw.Wrap(e.text, body), "  ", st.Note)...)
	}
}

// streamLines renders the settled prefix with markdown (cached) and the
// still-changing tail as plain text, so a token costs a wrap, not a render.
func (r *renderer) streamLines(e *entry, w int) []string {
	cut := draw.StableSplit(e.text)
	if cut != e.prefixLen || w != e.prefixWidth || e.prefixLines == nil {
		e.prefixLen, e.prefixWidth = cut, w
		e.prefixLines = r.md.Render(e.text[:cut], w)
		if e.prefixLines == nil {
			e.prefixLines = []string{}
		}
	}
	out := []string{"", r.st.Who.Render(e.who) + r.st.Dim.Render(" …")}
	out = append(out, r.reasoningLines(e.reasoning, w)...)
	out = append(out, e.prefixLines...)
	tail := strings.TrimLeft(e.text[cut:], "\n")
	if tail != "" {
		if len(e.prefixLines) > 0 {
			out = append(out, "")
		}
		out = append(out, draw.Indent(draw.Wrap(tail+"▍", max(w-2, 10)), "  ")...)
	}
	return out
}

// reasoningLines show a reply's thinking, dimmed: one line saying how long
// it is, or (thinking on) the whole of it behind a bar.
func (r *renderer) reasoningLines(reasoning string, w int) []string {
	reasoning = strings.Trim(reasoning, "\n")
	if strings.TrimSpace(reasoning) == "" {
		return nil
	}
	lines := draw.Wrap(reasoning, max(w-6, 10))
	if !r.thinking {
		n := len(lines)
		unit := "lines"
		if n == 1 {
			unit = "line"
		}
		return []string{draw.Clip("  "+r.st.Thinking.Render(fmt.Sprintf("thinking… (%d %s) · ctrl+t shows it", n, unit)), w)}
	}
	return draw.Indent(lines, "  "+r.st.Dim.Render("┊ "), r.st.Thinking)
}

func (r *renderer) toolLine(e *entry, w int) string {
	st := r.st
	line := "  " + st.Tool.Render("⚙ "+e.tool)
	if e.arg != "" {
		line += " " + st.Dim.Render(engine.FirstLine(e.arg, 60))
	}
	switch {
	case !e.done:
		line += st.Dim.Render("  …")
	case e.isErr:
		line += "  " + st.Bad.Render("✗ "+engine.FirstLine(tools.ErrorText(e.text), 80))
	default:
		line += "  " + st.OK.Render("✓")
	}
	return draw.Clip(line, w)
}

// maxResultLines bounds an expanded tool result.
const maxResultLines = 8

// toolResult is the start of a tool call's result, for the expanded view.
func (r *renderer) toolResult(text string, w int) []string {
	lines := draw.Wrap(strings.TrimRight(text, "\n"), max(w-6, 10))
	more := len(lines) - maxResultLines
	if more > 0 {
		lines = append(lines[:maxResultLines], fmt.Sprintf("… %d more lines", more))
	}
	return draw.Indent(lines, "    │ ", r.st.Dim)
}

// toggleThinking shows replies' reasoning whole, or one line each; the
// hint says which.
func (r *renderer) toggleThinking() string {
	r.thinking = !r.thinking
	if r.thinking {
		return "reasoning shown: ctrl+t or /reasoning folds it"
	}
	return "reasoning folded to one line: ctrl+t or /reasoning shows it"
}

// toggleDiffs shows writes' diffs whole, or one line each; the hint says which.
func (r *renderer) toggleDiffs() string {
	r.diffs = !r.diffs
	if r.diffs {
		return "diffs shown: ctrl+g or /diffs folds them"
	}
	return "diffs folded to one line per write: ctrl+g or /diffs shows them"
}
