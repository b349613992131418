package tools

import (
	"context"
	"errors"
	"fmt"
)

type listTeammatesArgs struct{}

// newListTeammates describes team, cut to outputCap bytes. It only reads
// the registry, so it is parallel.
func newListTeammates(team TeamManager, outputCap int) Tool {
	return newTool(ListTeammatesName,
		"List every teammate with its role and status (queued, working, idle, shutdown, failed).",
		func(ctx context.Context, _ listTeammatesArgs) (Result, error) {
			if team == nil {
				return Result{}, errors.New("no team manager configured")
			}
			text, err := team.Describe(ctx)
			if err != nil {
				return Result{}, fmt.Errorf("describe team: %w", err)
			}
			return Text(truncateMiddle(text, outputCap)), nil
		}, parallel)
}
