package natsstore

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
)

// since is the Mailbox's inbox.Since: the stream sequence to read on from.
type since struct{ next uint64 }

// ReadSince returns the messages of name's inbox stored after s (nil: from
// the start), read or not (bad ones passed over), and where the next call
// goes on from: a reader that keeps it reads each message once, and a call
// with nothing new costs one request.
func (mb *Mailbox) ReadSince(ctx context.Context, name string, s inbox.Since) ([]inbox.Message, inbox.Since, error) {
	if err := inbox.ValidateName(name); err != nil {
		return nil, s, err
	}
	p, _ := s.(since)
	if p.next == 0 {
		p.next = 1
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var msgs []inbox.Message
	last, err := mb.scan(ctx, name, p.next, 0, func(_ uint64, m *inbox.Message, _ *inbox.BadLine) {
		if m != nil {
			msgs = append(msgs, *m)
		}
	})
	if err != nil {
		return nil, s, err
	}
	if last > 0 {
		p.next = last + 1
	}
	return msgs, p, nil
}
