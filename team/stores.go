package team

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

// What the team needs of its storage, declared here where it is used.
// The files are the default implementations (*inbox.Store, *Registry,
// *board.Board, *EventLog); each may also be kept in JetStream
// (internal/store/natsstore): the inboxes given as Options.Mailbox, the
// registry, the board and the event log as the documents and lines beneath
// them (Options.Registry, Options.Board, Options.EventLines). The contract each must
// keep is the conformance suite in internal/store/storetest, whose interfaces
// these method sets hold (the registry's through Change, which the suite's
// Update is made of in the test). A batch's read position (inbox.Batch.Pos) is the
// store's own token, so any store can commit it.

// Mailbox is the agents' inboxes as the team uses them: the loop reads
// what is unread and commits it once recorded (loop.Inbox); the team
// appends, looks cheaply, is woken, reads a whole log (resume, recovery)
// or on from where it last read one (the protocols' indexes, inbox.Indexes) and
// counts it (Describe).
type Mailbox interface {
	mailAppender
	ReadUnread(ctx context.Context, name string) (inbox.Batch, error)
	Commit(ctx context.Context, name string, b inbox.Batch) error
	HasUnread(ctx context.Context, name string) (bool, error)
	Watch(ctx context.Context, name string) <-chan struct{}
	ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error)
	ReadSince(ctx context.Context, name string, since inbox.Since) ([]inbox.Message, inbox.Since, error)
	Stats(ctx context.Context, name string) (inbox.Stats, error)
	// Names lists the inboxes that hold anything (the views list them).
	Names(ctx context.Context) ([]string, error)
	// Mark tells cheaply whether an inbox changed (the views poll it).
	Mark(ctx context.Context, name string) (inbox.Mark, error)
}

// mailAppender is all the request service needs of the inboxes.
type mailAppender = protocol.Appender

// RegistryDoc is the registry as the team changes it (*registry.Registry):
// read; change the whole document (Change, which hands back no copy: what
// a caller needs of the result it reads inside fn), one teammate's entry,
// or its status now or joined to a later write (SetStatusLater; Flush
// returns once those are stored).
type RegistryDoc interface {
	registryReader
	Change(ctx context.Context, fn func(*registry.Config) error) error
	ChangeTeammate(ctx context.Context, name string, fn func(*registry.Member) error) error
	ChangeStatus(ctx context.Context, name string, status registry.Status, fn func(*registry.Member)) error
	SetStatusLater(name string, status registry.Status, fn func(*registry.Member), after func(error))
	Flush()
}

// registryReader is all a recipient check needs of the registry.
type registryReader interface {
	Read(ctx context.Context) (registry.Config, error)
}

// EventSink is the event log as the team writes it (event.Sink).
type EventSink = event.Sink

// files are the file stores the team opened; the exported accessors hand
// them to the views that read their files (the TUI), even when the team's
// mailbox is another store (Options.Mailbox).
type files struct {
	inbox *inbox.Store
	reg   *registry.Registry
	board *board.Board
}
