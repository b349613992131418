package tools

import (
	"context"
	"encoding/json"
	"errors"
)

type respondShutdownArgs struct {
	RequestID string `json:"request_id" description:"The correlation_id of the shutdown_request message."`
	Approve   bool   `json:"approve" description:"true to stop for good after this turn; false to keep working."`
	Reason    string `json:"reason,omitempty" description:"Why you reject (required when approve is false), e.g. 'mid-edit of parser.go'."`
}

type respondShutdown struct{ env Env }

func (respondShutdown) Name() string { return RespondShutdownName }

func (respondShutdown) Description() string {
	return "Answer the lead's shutdown_request. Approve to stop for good at the end of this turn, or reject with a reason to keep working. " +
		"If you end your turn without answering, the shutdown is approved for you."
}

func (respondShutdown) Params() any { return respondShutdownArgs{} }

func (t respondShutdown) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a respondShutdownArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("request_id", a.RequestID); err != nil {
		return Errorf("%v", err), nil
	}
	if !a.Approve {
		if err := nonEmpty("reason", a.Reason); err != nil {
			return Errorf("a rejection needs a reason: %v", err), nil
		}
	}
	if t.env.Protocols == nil {
		return Result{}, errors.New("no protocols configured")
	}
	out, err := t.env.Protocols.RespondShutdown(ctx, t.env.Agent, a.RequestID, a.Approve, a.Reason)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Text(out), nil
}
