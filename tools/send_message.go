package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentteam/agentteam/workspace"
)

type sendMessageArgs struct {
	To      string `json:"to" description:"Recipient's name: a teammate, or 'lead'."`
	Content string `json:"content" description:"The message text."`
}

type sendMessage struct{ env Env }

func (sendMessage) Name() string { return SendMessageName }

func (sendMessage) Description() string {
	return "Send a message to one agent's inbox by name. The recipient reads it before its next turn; an idle teammate wakes up."
}

func (sendMessage) Params() any { return sendMessageArgs{} }

func (t sendMessage) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a sendMessageArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	// Validate before anything else so a name like "../x" never reaches a path.
	if err := workspace.ValidateName(a.To); err != nil {
		return Errorf("invalid recipient: %v", err), nil
	}
	if a.To == t.env.Agent {
		return Errorf("you cannot send a message to yourself (%s)", a.To), nil
	}
	if err := nonEmpty("content", a.Content); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Messenger == nil {
		return Result{}, errors.New("no messenger configured")
	}
	if err := t.env.Messenger.Send(ctx, t.env.Agent, a.To, a.Content); err != nil {
		return Errorf("could not send to %s: %v", a.To, err), nil
	}
	return Text(sprintf("Message sent to %s.", a.To)), nil
}
