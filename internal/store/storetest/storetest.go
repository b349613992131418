// Package storetest is the contract every storage behind a team must keep,
// written once as tests that take any implementation: the files of today
// and any other store (NATS JetStream) run the same checks.
package storetest

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
)

// Mailbox is what the engine needs of the per-agent message logs: append,
// read what is unread from the read position, commit it as read once the
// reader has recorded it, ask cheaply, and be woken. Each call takes its
// caller's context: an append or a read once it is done does nothing.
type Mailbox interface {
	Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error)
	ReadUnread(ctx context.Context, name string) (inbox.Batch, error)
	Commit(ctx context.Context, name string, b inbox.Batch) error
	HasUnread(ctx context.Context, name string) (bool, error)
	Watch(ctx context.Context, name string) <-chan struct{}
	// ReadSince reads an inbox on from where an earlier call left it
	// (nil: its start), read or not: the protocols' indexes of requests
	// and answers read each message once.
	ReadSince(ctx context.Context, name string, since inbox.Since) ([]inbox.Message, inbox.Since, error)
	// Names lists the agents that have an inbox, sorted.
	Names(ctx context.Context) ([]string, error)
}

// Doc is a document changed only by compare-and-set (read, change, write
// if nobody wrote meanwhile): what the registry and the task board need.
// Each call takes its caller's context: a read or an update once it is
// done does nothing.
type Doc[T any] interface {
	Read(ctx context.Context) (T, error)
	// Update applies fn to the current document and stores the result;
	// an error from fn stores nothing and is returned.
	Update(ctx context.Context, fn func(*T) error) (T, error)
}
