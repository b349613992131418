package team

import (
	"context"

	"github.com/agentteam/agentteam/team/board"
)

// fencedTasks is the task board of a lead's process: every change is
// refused once fence says this process no longer runs the team (its
// owner lock lost), so a lead halted late changes no task another lead
// now hands out. Reads go through.
type fencedTasks struct {
	TaskDoc
	fence func() error
}

func (f fencedTasks) Create(ctx context.Context, by string, in board.NewTask) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.TaskDoc.Create(ctx, by, in)
}

func (f fencedTasks) Claim(ctx context.Context, id, agent string) (board.Task, bool, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, false, err
	}
	return f.TaskDoc.Claim(ctx, id, agent)
}

func (f fencedTasks) ClaimNext(ctx context.Context, agent, role string, roles []string) (board.Task, bool, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, false, err
	}
	return f.TaskDoc.ClaimNext(ctx, agent, role, roles)
}

func (f fencedTasks) SetBlockers(ctx context.Context, id, agent string, blockedBy []string) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.TaskDoc.SetBlockers(ctx, id, agent, blockedBy)
}

func (f fencedTasks) Update(ctx context.Context, id, agent string, status board.TaskStatus, note string) (board.Task, []board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, nil, err
	}
	return f.TaskDoc.Update(ctx, id, agent, status, note)
}

func (f fencedTasks) HandOver(ctx context.Context, id, from, to string) (board.Task, error) {
	if err := f.fence(); err != nil {
		return board.Task{}, err
	}
	return f.TaskDoc.HandOver(ctx, id, from, to)
}
