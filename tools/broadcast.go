package tools

import (
	"context"
	"errors"
	"strings"
)

type broadcastArgs struct {
	Content string `json:"content" description:"The message text every teammate receives."`
}

// newBroadcast sends to every teammate through m as agent.
func newBroadcast(m Messenger, agent string) Tool {
	return newTool(BroadcastName,
		"Send one message to every teammate's inbox at once. Use send_message for a single recipient.",
		func(ctx context.Context, a broadcastArgs) (Result, error) {
			if err := nonEmpty("content", a.Content); err != nil {
				return Errorf("%v", err), nil
			}
			if m == nil {
				return Result{}, errors.New("no messenger configured")
			}
			reached, err := m.Broadcast(ctx, agent, a.Content)
			if err != nil {
				return Errorf("broadcast failed: %v", err), nil
			}
			if len(reached) == 0 {
				return Text("Broadcast reached nobody: there are no teammates yet."), nil
			}
			return Text(sprintf("Broadcast sent to %d teammate(s): %s.", len(reached), strings.Join(reached, ", "))), nil
		})
}
