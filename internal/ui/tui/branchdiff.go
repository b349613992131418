package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/team/event"
)

// Focusing a teammate that works in its own git worktree shows its
// branch's diff against the lead's branch first in its pane (the diff
// `agentteam diff` and /diff show), read by a command off the Update
// goroutine when the focus moves there and again each time the teammate
// reports (its result commits its work) or its branch changes.

// branchView is the focused teammate's branch diff and its reads.
type branchView struct {
	e       *entry // nil until the teammate is known to work on a branch
	stat    string // the registry's diffstat the last read followed
	loading bool   // a read is under way
	stale   bool   // the branch changed during the read: read again
	shown   bool   // the pane was moved to the diff once
}

// branchMsg is a teammate's branch diff, read by a command.
type branchMsg struct {
	name, text string
	err        error
}

// refreshBranch reads the focused teammate's branch diff, when it has a
// branch: one read at a time, one more if asked meanwhile.
func (v *mateView) refreshBranch(m *Model) {
	if v == nil {
		return
	}
	i := m.team.Find(v.name)
	if i < 0 || m.team.Members[i].Branch == "" {
		return
	}
	mb := m.team.Members[i]
	if v.branch.loading {
		v.branch.stale = true
		return
	}
	if v.branch.e == nil {
		v.branch.e = &entry{kind: entryBranch, who: v.name, arg: mb.Branch}
	}
	v.placeBranch()
	v.branch.loading, v.branch.stat = true, mb.Diffstat
	eng, ctx, name := m.eng, m.ctx, v.name
	m.cmds = append(m.cmds, func() tea.Msg {
		text, err := eng.Diff(ctx, name)
		return branchMsg{name: name, text: text, err: err}
	})
}

// placeBranch puts the branch diff first in the pane, under the line that
// says whose pane it is, unless it is there (/clear takes it out).
func (v *mateView) placeBranch() {
	for _, e := range v.pane.entries {
		if e == v.branch.e {
			return
		}
	}
	at := 0
	if len(v.pane.entries) > 0 && v.pane.entries[0].kind == entryNote {
		at = 1
	}
	v.pane.entries = append(v.pane.entries[:at], append([]*entry{v.branch.e}, v.pane.entries[at:]...)...)
	if !v.pane.follow && v.pane.top >= at {
		v.pane.top++ // keep what the person reads in place
	}
}

// branchDiff takes a read's diff into the focused teammate's pane.
func (v *mateView) branchDiff(m *Model, msg branchMsg) {
	if v == nil || v.name != msg.name || v.branch.e == nil {
		return
	}
	e := v.branch.e
	v.branch.loading = false
	e.done, e.isErr = true, msg.err != nil
	if msg.err != nil {
		e.text, e.diff = msg.err.Error(), ""
	} else {
		e.text, e.diff = "", msg.text
	}
	e.invalidate()
	if !v.branch.shown {
		v.branch.shown = true
		if v.pane.follow {
			// Focus shows the diff: the pane starts at it, pgdn or end goes on to the conversation.
			v.pane.toStart(m.r, m.scr.convWidth(), m.scr.convHeight())
		}
	}
	if v.branch.stale {
		v.branch.stale = false
		v.refreshBranch(m)
	}
}

// branchFromSnapshot reads the diff again when the registry shows the
// focused teammate's branch for the first time or a new diffstat for it.
func (v *mateView) branchFromSnapshot(m *Model) {
	if v == nil {
		return
	}
	i := m.team.Find(v.name)
	if i < 0 || m.team.Members[i].Branch == "" {
		return
	}
	if v.branch.e == nil || m.team.Members[i].Diffstat != v.branch.stat {
		v.refreshBranch(m)
	}
}

// branchChanged reports whether an event changes a teammate's branch: its
// report (which commits its work) or a commit, merge or conflict.
func branchChanged(e event.Event, name string) bool {
	switch p := e.Payload.(type) {
	case event.WorktreeChanged:
		return e.Agent == name
	case event.MessageDelivered:
		return p.From == name && p.Type == inbox.TypeResult
	}
	return false
}

// branchLines are the branch diff's entry: a title, then the diff.
func (r *renderer) branchLines(e *entry, w int) []string {
	st := r.st
	head := "  " + st.Header.Render("branch "+draw.Printable(e.arg)) + st.Dim.Render(" against the lead's branch · read again when "+e.who+" reports")
	out := []string{"", draw.Clip(head, w)}
	switch {
	case !e.done:
		out = append(out, "  "+st.Dim.Render("reading the diff…"))
	case e.isErr:
		out = append(out, draw.Indent(draw.Wrap("! "+e.text, max(w-4, 10)), "  ", st.ErrText)...)
	default:
		out = append(out, draw.Indent(draw.Diff(st, e.diff, max(w-4, 10)), "  ")...)
	}
	return out
}
