package board

import (
	"context"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// HandOver moves a task from one owner to another, compare-and-set: only
// while from still owns it in progress, so a handoff never takes a task
// its sender has meanwhile finished or released.
func (b *Board) HandOver(ctx context.Context, id, from, to string) (Task, error) {
	if err := inbox.ValidateName(to); err != nil {
		return Task{}, fmt.Errorf("%w: %v", ErrTaskInvalid, err)
	}
	var task Task
	_, err := b.update(ctx, func(f *File) error {
		i := f.Find(id)
		if i < 0 {
			return notFound(id)
		}
		t := &f.Tasks[i]
		if t.Status != TaskInProgress || t.Owner != from {
			return fmt.Errorf("%s is no longer %s's (it is %s, owner %s): %w", id, from, t.Status, orNobody(t.Owner), ErrTaskTaken)
		}
		t.Owner = to
		t.UpdatedAt = time.Now().UTC()
		task = *t
		return nil
	})
	return task, err
}
