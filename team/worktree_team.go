package team

import (
	"context"
	"errors"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// isolationOf is the isolation a spawn asks for, or the team's default.
func (t *Team) isolationOf(asked string) string {
	switch {
	case asked != "":
		return asked
	case t.opts.Isolation != "":
		return t.opts.Isolation
	}
	return worktree.IsolationNone
}

// place gives a teammate of isolation worktree its worktree (found or
// made) and records it in the entry; a teammate of isolation none works
// in the workspace and gets a zero placed.
func (t *Team) place(ctx context.Context, name, iso string, entry *registry.Member) (worktree.Placed, error) {
	return t.placeFrom(ctx, name, iso, entry, worktree.Start{})
}

// placeFrom is place with a new branch begun where from says (a worker's
// spawn: the lead's commit); the entry's BaseNote says why not.
func (t *Team) placeFrom(ctx context.Context, name, iso string, entry *registry.Member, from worktree.Start) (worktree.Placed, error) {
	if err := worktree.CheckIsolation(iso); err != nil {
		return worktree.Placed{}, err
	}
	entry.Isolation = iso
	if iso != worktree.IsolationWorktree {
		entry.Isolation = ""
		return worktree.Placed{}, nil
	}
	p, made, note, err := t.worktrees.Ensure(ctx, name, from)
	if err != nil {
		return worktree.Placed{}, err
	}
	entry.Worktree, entry.Branch, entry.Merged, entry.BaseNote = p.Rel, p.WT.Branch, false, note
	if note != "" {
		t.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInternal, "", errors.New(note))})
	}
	if made {
		t.events.Emit(event.Event{Agent: name, Payload: event.WorktreeChanged{Action: event.WorktreeCreated, Branch: p.WT.Branch, Path: p.Rel}})
	}
	return p, nil
}

// MergeAs merges a teammate's branch into the lead's branch for from (the
// lead, or the person in the TUI); a conflict goes to the teammate as a
// message from from.
func (t *Team) MergeAs(ctx context.Context, from, name string) (worktree.MergeReport, error) {
	return t.worktrees.Merge(ctx, name, func(text string) error {
		_, err := t.messenger.deliver(from, name, inbox.TypeMessage, text)
		return err
	})
}

// MergeTeammate merges a teammate's branch into the lead's branch for the
// lead's merge_teammate tool; a conflict goes to the teammate as a
// message from the lead and comes back as an error the model reads.
func (t *Team) MergeTeammate(ctx context.Context, name string) (string, error) {
	rep, err := t.MergeAs(ctx, workspace.LeadName, name)
	if err != nil {
		return "", err
	}
	if len(rep.Conflicts) > 0 {
		return "", errors.New(rep.Text())
	}
	return rep.Text(), nil
}

// Worktrees are the team's teammate worktrees.
func (t *Team) Worktrees() *worktree.Worktrees { return t.worktrees }
