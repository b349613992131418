package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

type readInboxArgs struct{}

// newReadInbox reads the caller's own inbox through in.
func newReadInbox(in InboxReader) Tool {
	return newTool(ReadInboxName,
		"Read your unread messages now and mark them read. New messages also arrive by themselves before each of your turns.",
		func(ctx context.Context, _ readInboxArgs) (Result, error) {
			if in == nil {
				return Result{}, errors.New("no inbox reader configured")
			}
			text, commit, err := in.ReadInbox(ctx)
			if err != nil {
				return Result{}, fmt.Errorf("read inbox: %w", err)
			}
			if strings.TrimSpace(text) == "" {
				text = "no unread messages"
			}
			// Not truncated: the messages are marked read, so a cut would lose them.
			return Result{Content: text, AfterRecord: commit}, nil
		})
}
