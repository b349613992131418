package tui

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/internal/ui/tui/panel"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// Every write_file / edit_file call that went well, the lead's and each
// teammate's, shows in the conversation as one line, "✎ alice wrote
// notes.txt (+3 −1)", and with its diff below when diffs are shown (ctrl+g,
// /diffs; ctrl+o shows them with the other tool results). The diff comes
// from the permission event that let the write run (team/permission.go
// computes it before the call), matched to the tool call by agent and path.

// isWrite reports whether a tool changes a file.
func isWrite(tool string) bool { return tool == tools.WriteFileName || tool == tools.EditFileName }

// maxPendingDiffs bounds the allowed writes of one agent whose tool call
// has not ended yet (a cancelled call never ends).
const maxPendingDiffs = 16

// maxDoneDiffs bounds the diffs kept for the focused teammate's view.
const maxDoneDiffs = 512

// maxWriteDiffLines bounds a write's diff in the conversation (draw.CutLine
// bounds each of its lines).
const maxWriteDiffLines = 200

// shownDiff is a write's diff as the conversation keeps it: its counts,
// and its start, cut so that a write of a large file costs the screen
// little.
type shownDiff struct {
	text     string
	add, del int
	counted  bool // the diff has hunks (not a note such as "(a.txt: no change)")
	more     int  // lines left out of text
}

func newShownDiff(d string) shownDiff {
	s := shownDiff{}
	s.add, s.del, s.counted = diffCounts(d)
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	if len(lines) > maxWriteDiffLines {
		s.more = len(lines) - maxWriteDiffLines
		lines = lines[:maxWriteDiffLines]
	}
	for i, l := range lines {
		lines[i] = draw.CutLine(l)
	}
	s.text = strings.Join(lines, "\n")
	return s
}

// writeDiffs are the diffs of writes: allowed and waiting for their tool
// call to end, and those of ended calls, found again by arguments when a
// teammate's conversation is read from its session.
type writeDiffs struct {
	pending map[string][]pendingDiff // agent → allowed writes, oldest first
	done    map[string]shownDiff     // agent + NUL + arguments → the diff
	order   []string                 // done's keys, oldest first
}

type pendingDiff struct {
	path string
	diff shownDiff
}

// allowed keeps the diff of a write that may now run.
func (w *writeDiffs) allowed(agent, subject, diff string) {
	if w.pending == nil {
		w.pending = map[string][]pendingDiff{}
	}
	q := append(w.pending[agent], pendingDiff{path: subject, diff: newShownDiff(diff)})
	if len(q) > maxPendingDiffs {
		q = q[len(q)-maxPendingDiffs:]
	}
	w.pending[agent] = q
}

// take is the write allowed for agent's call with these arguments, if one
// waits; it waits no more.
func (w *writeDiffs) take(agent, args string) (pendingDiff, bool) {
	p := keyArgOf(args, "path")
	q := w.pending[agent]
	for i, d := range q {
		if samePath(p, d.path) {
			w.pending[agent] = append(q[:i:i], q[i+1:]...)
			return d, true
		}
	}
	return pendingDiff{}, false
}

// remember keeps an ended write's diff.
func (w *writeDiffs) remember(agent, args string, diff shownDiff) {
	if w.done == nil {
		w.done = map[string]shownDiff{}
	}
	k := agent + "\x00" + args
	if _, ok := w.done[k]; !ok {
		w.order = append(w.order, k)
	}
	w.done[k] = diff
	if len(w.order) > maxDoneDiffs {
		delete(w.done, w.order[0])
		w.order = w.order[1:]
	}
}

// lookup is the diff of agent's ended write with these arguments; ok is
// false when this screen did not see it made.
func (w *writeDiffs) lookup(agent, args string) (d shownDiff, ok bool) {
	d, ok = w.done[agent+"\x00"+args]
	return d, ok
}

// samePath reports whether a path as the model gave it names the file the
// permission event named (relative to the agent's root, with slashes); an
// absolute path is taken to be under that root.
func samePath(arg, subject string) bool {
	if arg == "" || subject == "" {
		return false
	}
	a := path.Clean(filepath.ToSlash(arg))
	return a == subject || path.IsAbs(a) && strings.HasSuffix(a, "/"+subject)
}

// keyArgOf is one string argument of a call's JSON arguments.
func keyArgOf(args, key string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// entry is the conversation's entry for an ended tool call that wrote a
// file with a known diff; nil for any other call. A teammate's write is
// counted in the team panel, and shown as one in its view if focused.
func (w *writeDiffs) entry(agent string, p event.ToolCall, tp *panel.Team, mate *mateView) *entry {
	if p.Tool == tools.BashName && p.Diff != "" {
		// A command that changed files the person's tools run later.
		d := newShownDiff(p.Diff)
		w.remember(agent, p.Args, d)
		return &entry{kind: entryWrite, tool: p.Tool, arg: strings.Join(diffFiles(p.Diff), ", "), write: d, text: p.Result, done: true, isErr: p.IsError}
	}
	if !isWrite(p.Tool) {
		return nil
	}
	d, ok := w.take(agent, p.Args)
	if p.IsError {
		return nil
	}
	// The diff the write made, carried by its tool call, is the truth; the
	// permission event's (what the write would make) stands in when the
	// call has none, or when the call's was cut and the event's was not.
	if p.Diff != "" && !(ok && strings.Contains(p.Diff, "\n[diff cut: ")) {
		if !ok {
			d.path = path.Clean(filepath.ToSlash(keyArgOf(p.Args, "path")))
		}
		d.diff, ok = newShownDiff(p.Diff), true
	}
	if !ok {
		return nil
	}
	w.remember(agent, p.Args, d.diff)
	if agent != inbox.LeadName {
		tp.CountWrite(agent, d.path, d.diff.add, d.diff.del)
	}
	if mate != nil && mate.name == agent {
		mate.withDiff(p.Args, d.diff)
	}
	// The path as the workspace names it, not as the model wrote it ("./a.txt").
	return &entry{kind: entryWrite, tool: p.Tool, arg: d.path, write: d.diff, text: p.Result, done: true}
}

// diffCounts are the lines a unified diff adds and removes; ok is false
// when it has no hunk (a note such as "(a.txt: no change)").
func diffCounts(d string) (add, del int, ok bool) {
	inHunk := false
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inHunk = false
		case strings.HasPrefix(l, "@@"):
			inHunk, ok = true, true
		case !inHunk:
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del, ok
}

// writeLines are a write's line, and its diff when diffs are shown.
func (r *renderer) writeLines(e *entry, w int) []string {
	st := r.st
	verb := "wrote "
	switch e.tool {
	case tools.EditFileName:
		verb = "edited "
	case tools.BashName:
		verb = "ran a command that changed "
	}
	head := "  " + st.Tool.Render("✎ ")
	if e.who != "" {
		head += st.Who.Render(e.who) + " "
	}
	head += verb + draw.Printable(engine.FirstLine(e.arg, 80))
	if d := e.write; d.counted {
		head += " " + st.Dim.Render("(") + st.OK.Render(fmt.Sprintf("+%d", d.add)) + " " + st.Bad.Render(fmt.Sprintf("−%d", d.del)) + st.Dim.Render(")")
	} else {
		head += " " + st.Dim.Render(draw.Printable(engine.FirstLine(d.text, 80)))
	}
	if !r.diffs && !r.expand {
		return []string{draw.Clip(head+st.Dim.Render(" · ctrl+g shows it"), w)}
	}
	out := []string{draw.Clip(head, w)}
	if r.expand && strings.TrimSpace(e.text) != "" {
		out = append(out, r.toolResult(e.text, w)...)
	}
	out = append(out, draw.Indent(draw.Diff(st, e.write.text, max(w-6, 10)), "    ")...)
	if e.write.more > 0 {
		out = append(out, "    "+st.Dim.Render(fmt.Sprintf("… %d more lines", e.write.more)))
	}
	return out
}

// diffs is /diffs [on|off].
func (cm *commander) diffs(c engine.Command) {
	m := cm.m
	on, err := engine.Toggle(c.Name, c.Rest, m.r.diffs)
	if err != nil {
		m.note(noteMsg{text: err.Error(), isErr: true})
		return
	}
	m.r.diffs = !on
	m.hint = m.r.toggleDiffs()
}

// diffFiles are the files a unified diff changes, in its order.
func diffFiles(d string) []string {
	var out []string
	var from string
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			from = strings.TrimPrefix(strings.TrimPrefix(l, "--- "), "a/")
		case strings.HasPrefix(l, "+++ "):
			to := strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if to == "/dev/null" {
				to = from
			}
			out = append(out, to)
		case strings.HasPrefix(l, "(") && strings.Contains(l, ": changed; diff not shown"):
			out = append(out, strings.TrimPrefix(l[:strings.Index(l, ":")], "("))
		}
	}
	return out
}
