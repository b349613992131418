package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

type listTeammatesArgs struct{}

type listTeammates struct{ env Env }

func (listTeammates) Name() string { return ListTeammatesName }

func (listTeammates) Description() string {
	return "List every teammate with its role and status (queued, working, idle, shutdown, failed)."
}

func (listTeammates) Params() any { return listTeammatesArgs{} }

// Parallel: it only reads the registry.
func (listTeammates) Parallel() bool { return true }

func (t listTeammates) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a listTeammatesArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Team == nil {
		return Result{}, errors.New("no team manager configured")
	}
	text, err := t.env.Team.Describe(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("describe team: %w", err)
	}
	return Text(truncateMiddle(text, t.env.OutputCap)), nil
}
