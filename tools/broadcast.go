package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

type broadcastArgs struct {
	Content string `json:"content" description:"The message text every teammate receives."`
}

type broadcast struct{ env Env }

func (broadcast) Name() string { return BroadcastName }

func (broadcast) Description() string {
	return "Send one message to every teammate's inbox at once. Use send_message for a single recipient."
}

func (broadcast) Params() any { return broadcastArgs{} }

func (t broadcast) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a broadcastArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := nonEmpty("content", a.Content); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Messenger == nil {
		return Result{}, errors.New("no messenger configured")
	}
	reached, err := t.env.Messenger.Broadcast(ctx, t.env.Agent, a.Content)
	if err != nil {
		return Errorf("broadcast failed: %v", err), nil
	}
	if len(reached) == 0 {
		return Text("Broadcast reached nobody: there are no teammates yet."), nil
	}
	return Text(sprintf("Broadcast sent to %d teammate(s): %s.", len(reached), strings.Join(reached, ", "))), nil
}
