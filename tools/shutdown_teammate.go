package tools

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
)

type shutdownTeammateArgs struct {
	Name   string `json:"name" description:"The teammate to shut down."`
	Reason string `json:"reason" description:"Why, in one sentence; the teammate reads it."`
}

// newShutdownTeammate asks teammates to shut down through p as agent (the lead).
func newShutdownTeammate(p Protocols, agent string) Tool {
	return newTool(ShutdownTeammateName,
		"Ask a teammate to shut down. It approves (then stops for good) or rejects with a reason, e.g. when it is mid-edit; "+
			"an idle teammate is approved at once, and one that does not answer in time is shut down by force. The outcome arrives as a message.",
		func(ctx context.Context, a shutdownTeammateArgs) (Result, error) {
			if err := inbox.ValidateTeammateName(a.Name); err != nil {
				return Errorf("%v", err), nil
			}
			if err := nonEmpty("reason", a.Reason); err != nil {
				return Errorf("%v", err), nil
			}
			out, err := p.RequestShutdown(ctx, agent, a.Name, a.Reason)
			if err != nil {
				return Errorf("could not ask %s to shut down: %v", a.Name, err), nil
			}
			return Text(out), nil
		})
}
