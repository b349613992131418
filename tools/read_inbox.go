package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

type readInboxArgs struct{}

type readInbox struct{ env Env }

func (readInbox) Name() string { return ReadInboxName }

func (readInbox) Description() string {
	return "Read your unread messages now and mark them read. New messages also arrive by themselves before each of your turns."
}

func (readInbox) Params() any { return readInboxArgs{} }

func (t readInbox) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a readInboxArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if t.env.Inbox == nil {
		return Result{}, errors.New("no inbox reader configured")
	}
	text, commit, err := t.env.Inbox.ReadInbox(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("read inbox: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		text = "no unread messages"
	}
	// Not truncated: the messages are marked read, so a cut would lose them.
	return Result{Content: text, AfterRecord: commit}, nil
}
