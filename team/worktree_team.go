package team

import (
	"context"
	"errors"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
)

// placement is where each teammate works, and the merge of its branch:
// its worktree (found or made), or the workspace.
type placement struct {
	worktrees *worktree.Worktrees
	events    EventSink
	isolation string // the team's default
	// tell gives a teammate a message (a merge's conflict).
	tell func(ctx context.Context, from, to, text string) error
}

// newPlacement is the team's placement, over its worktrees.
func newPlacement(t *Team) *placement {
	w := worktree.New(t.ws, t.reg, t.events)
	w.SetInCycle(t.roster.inCycle)
	return &placement{worktrees: w, events: t.events, isolation: t.opts.Isolation, tell: func(ctx context.Context, from, to, text string) error {
		_, err := t.messenger.deliver(ctx, from, to, inbox.TypeMessage, text)
		return err
	}}
}

// isolationOf is the isolation a spawn asks for, or the team's default.
func (p *placement) isolationOf(asked string) string {
	switch {
	case asked != "":
		return asked
	case p.isolation != "":
		return p.isolation
	}
	return worktree.IsolationNone
}

// place gives a teammate of isolation worktree its worktree (found or
// made) and records it in the entry; a teammate of isolation none works
// in the workspace and gets a zero placed.
func (p *placement) place(ctx context.Context, name, iso string, entry *registry.Member) (worktree.Placed, error) {
	return p.placeFrom(ctx, name, iso, entry, worktree.Start{})
}

// placeFrom is place with a new branch begun where from says (a worker's
// spawn: the lead's commit); the entry's BaseNote says why not.
func (p *placement) placeFrom(ctx context.Context, name, iso string, entry *registry.Member, from worktree.Start) (worktree.Placed, error) {
	if err := worktree.CheckIsolation(iso); err != nil {
		return worktree.Placed{}, err
	}
	entry.Isolation = iso
	if iso != worktree.IsolationWorktree {
		entry.Isolation = ""
		return worktree.Placed{}, nil
	}
	pl, made, note, err := p.worktrees.Ensure(ctx, name, from)
	if err != nil {
		return worktree.Placed{}, err
	}
	entry.Worktree, entry.Branch, entry.Merged, entry.BaseNote = pl.Rel, pl.WT.Branch, false, note
	if note != "" {
		p.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInternal, "", errors.New(note))})
	}
	if made {
		p.events.Emit(event.Event{Agent: name, Payload: event.WorktreeChanged{Action: event.WorktreeCreated, Branch: pl.WT.Branch, Path: pl.Rel}})
	}
	return pl, nil
}

// mergeAs merges a teammate's branch into the lead's branch for from; a
// conflict goes to the teammate as a message from from.
func (p *placement) mergeAs(ctx context.Context, from, name string) (worktree.MergeReport, error) {
	return p.worktrees.Merge(ctx, name, func(text string) error { return p.tell(ctx, from, name, text) })
}

// MergeTeammate merges a teammate's branch into the lead's branch for the
// lead's merge_teammate tool (tools.Merger); a conflict goes to the
// teammate as a message from the lead and comes back as an error the
// model reads.
func (p *placement) MergeTeammate(ctx context.Context, name string) (string, error) {
	rep, err := p.mergeAs(ctx, inbox.LeadName, name)
	if err != nil {
		return "", err
	}
	if len(rep.Conflicts) > 0 {
		return "", errors.New(rep.Text())
	}
	return rep.Text(), nil
}

// MergeAs merges a teammate's branch into the lead's branch for from (the
// lead, or the person in the TUI); a conflict goes to the teammate as a
// message from from.
func (t *Team) MergeAs(ctx context.Context, from, name string) (worktree.MergeReport, error) {
	return t.placing.mergeAs(ctx, from, name)
}

// Worktrees are the team's teammate worktrees.
func (t *Team) Worktrees() *worktree.Worktrees { return t.placing.worktrees }
