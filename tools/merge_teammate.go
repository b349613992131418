package tools

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
)

type mergeTeammateArgs struct {
	Name string `json:"name" description:"The teammate whose branch (agentteam/NAME) to merge into your branch."`
}

// newMergeTeammate merges teammates' branches through m (the lead's tool).
// Merges change the lead's tree: never in parallel.
func newMergeTeammate(m Merger) Tool {
	return newTool(MergeTeammateName,
		"Merge a teammate's branch (a teammate spawned with isolation 'worktree') into your branch with a merge commit. "+
			"Its uncommitted work is committed first. On a conflict the merge is aborted, your tree is left as it was, "+
			"the conflicting files are listed, and the teammate is asked to resolve them on its branch; merge again when it reports.",
		func(ctx context.Context, a mergeTeammateArgs) (Result, error) {
			if err := inbox.ValidateTeammateName(a.Name); err != nil {
				return Errorf("%v", err), nil
			}
			out, err := m.MergeTeammate(ctx, a.Name)
			if err != nil {
				return Errorf("%v", err), nil
			}
			return Text(out), nil
		})
}
