package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentteam/agentteam/workspace"
)

type shutdownTeammateArgs struct {
	Name   string `json:"name" description:"The teammate to shut down."`
	Reason string `json:"reason" description:"Why, in one sentence; the teammate reads it."`
}

type shutdownTeammate struct{ env Env }

func (shutdownTeammate) Name() string { return ShutdownTeammateName }

func (shutdownTeammate) Description() string {
	return "Ask a teammate to shut down. It approves (then stops for good) or rejects with a reason, e.g. when it is mid-edit; " +
		"an idle teammate is approved at once, and one that does not answer in time is shut down by force. The outcome arrives as a message."
}

func (shutdownTeammate) Params() any { return shutdownTeammateArgs{} }

func (t shutdownTeammate) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a shutdownTeammateArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := workspace.ValidateTeammateName(a.Name); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("reason", a.Reason); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Protocols == nil {
		return Result{}, errors.New("no protocols configured")
	}
	out, err := t.env.Protocols.RequestShutdown(ctx, t.env.Agent, a.Name, a.Reason)
	if err != nil {
		return Errorf("could not ask %s to shut down: %v", a.Name, err), nil
	}
	return Text(out), nil
}
