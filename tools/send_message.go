package tools

import (
	"context"
	"errors"

	"github.com/agentteam/agentteam/inbox"
)

type sendMessageArgs struct {
	To      string `json:"to" description:"Recipient's name: a teammate, or 'lead'."`
	Content string `json:"content" description:"The message text."`
}

// newSendMessage sends through m as agent.
func newSendMessage(m Messenger, agent string) Tool {
	return newTool(SendMessageName,
		"Send a message to one agent's inbox by name. The recipient reads it before its next turn; an idle teammate wakes up.",
		func(ctx context.Context, a sendMessageArgs) (Result, error) {
			// Validate before anything else so a name like "../x" never reaches a path.
			if err := inbox.ValidateName(a.To); err != nil {
				return Errorf("invalid recipient: %v", err), nil
			}
			if a.To == agent {
				return Errorf("you cannot send a message to yourself (%s)", a.To), nil
			}
			if err := nonEmpty("content", a.Content); err != nil {
				return Errorf("%v", err), nil
			}
			if m == nil {
				return Result{}, errors.New("no messenger configured")
			}
			if err := m.Send(ctx, agent, a.To, a.Content); err != nil {
				return Errorf("could not send to %s: %v", a.To, err), nil
			}
			return Text(sprintf("Message sent to %s.", a.To)), nil
		})
}
