package tasks

import (
	"context"

	"github.com/agentteam/agentteam/team/board"
)

// Fenced is doc refusing every change once fence says this process no
// longer runs the team. Reads go through.
func Fenced(doc Doc, fence func() error) Doc { return fenced{Doc: doc, fence: fence} }

// fenced is the task board of a lead's process: every change is
// refused once fence says this process no longer runs the team (its
// owner lock lost), so a lead halted late changes no task another lead
// now hands out. Reads go through.
type fenced struct {
	Doc
	fence func() error
}

func (f fenced) Create(ctx context.Context, by string, in board.NewTask) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.Doc.Create(ctx, by, in)
}

func (f fenced) Claim(ctx context.Context, id, agent string) (board.Task, bool, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, false, err
	}
	return f.Doc.Claim(ctx, id, agent)
}

func (f fenced) ClaimNext(ctx context.Context, agent, role string, roles []string) (board.Task, bool, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, false, err
	}
	return f.Doc.ClaimNext(ctx, agent, role, roles)
}

func (f fenced) SetBlockers(ctx context.Context, id, agent string, blockedBy []string) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.Doc.SetBlockers(ctx, id, agent, blockedBy)
}

func (f fenced) Update(ctx context.Context, id, agent string, status board.TaskStatus, note string) (board.Task, []board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, nil, err
	}
	return f.Doc.Update(ctx, id, agent, status, note)
}

func (f fenced) HandOver(ctx context.Context, id, from, to string) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.Doc.HandOver(ctx, id, from, to)
}
