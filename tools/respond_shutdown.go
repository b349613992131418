package tools

import (
	"context"
)

type respondShutdownArgs struct {
	RequestID string `json:"request_id" description:"The correlation_id of the shutdown_request message."`
	Approve   bool   `json:"approve" description:"true to stop for good after this turn; false to keep working."`
	Reason    string `json:"reason,omitempty" description:"Why you reject (required when approve is false), e.g. 'mid-edit of parser.go'."`
}

// newRespondShutdown answers shutdown requests through p as agent.
func newRespondShutdown(p Protocols, agent string) Tool {
	return newTool(RespondShutdownName,
		"Answer the lead's shutdown_request. Approve to stop for good at the end of this turn, or reject with a reason to keep working. "+
			"If you end your turn without answering, the shutdown is approved for you.",
		func(ctx context.Context, a respondShutdownArgs) (Result, error) {
			if err := nonEmpty("request_id", a.RequestID); err != nil {
				return Errorf("%v", err), nil
			}
			if !a.Approve {
				if err := nonEmpty("reason", a.Reason); err != nil {
					return Errorf("a rejection needs a reason: %v", err), nil
				}
			}
			return textOrRefusal(p.RespondShutdown(ctx, agent, a.RequestID, a.Approve, a.Reason))
		})
}
