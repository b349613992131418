package board

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// SetBlockers replaces the blockers of a pending task (its creator or the
// lead only); a dependency cycle is refused.
func (b *Board) SetBlockers(ctx context.Context, id, agent string, blockedBy []string) (Task, error) {
	blockers, err := cleanIDs(blockedBy)
	if err != nil {
		return Task{}, err
	}
	var task Task
	_, err = b.update(ctx, func(f *File) error {
		i := f.Find(id)
		if i < 0 {
			return notFound(id)
		}
		t := &f.Tasks[i]
		if agent != t.CreatedBy && agent != inbox.LeadName {
			return fmt.Errorf("only %s, who created %s, or the lead may change what it waits for: %w", t.CreatedBy, t.ID, ErrTaskNotAllowed)
		}
		if t.Status != TaskPending {
			return fmt.Errorf("%s is %s (owner %s); only a pending task's blockers change: %w", t.ID, t.Status, orNobody(t.Owner), ErrTaskNotPending)
		}
		for _, bid := range blockers {
			if f.Find(bid) < 0 {
				return fmt.Errorf("%w: blocked_by names %s, which is not on the board", ErrTaskNotFound, bid)
			}
			if path := dependencyPath(f, bid, t.ID); path != nil {
				return fmt.Errorf("%w: %s cannot wait for %s: that makes a cycle %s → %s", ErrTaskInvalid, t.ID, bid, t.ID, strings.Join(path, " → "))
			}
		}
		t.BlockedBy = blockers
		t.UpdatedAt = time.Now().UTC()
		task = *t
		return nil
	})
	return task, err
}

// dependencyPath returns the chain from → … → to following blocked_by, or
// nil if from does not (transitively) wait for to.
func dependencyPath(f *File, from, to string) []string {
	seen := map[string]bool{}
	var walk func(id string) []string
	walk = func(id string) []string {
		if id == to {
			return []string{id}
		}
		if seen[id] {
			return nil
		}
		seen[id] = true
		i := f.Find(id)
		if i < 0 {
			return nil
		}
		for _, next := range f.Tasks[i].BlockedBy {
			if rest := walk(next); rest != nil {
				return append([]string{id}, rest...)
			}
		}
		return nil
	}
	return walk(from)
}

// cleanIDs trims and de-duplicates task ids, refusing blank ones.
func cleanIDs(ids []string) ([]string, error) {
	out := []string{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, fmt.Errorf("%w: blocked_by holds an empty id", ErrTaskInvalid)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}
