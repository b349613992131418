package tools

import "context"

// What the tools need from the rest of the program, declared here so that
// team can implement it without tools importing team.

// Messenger delivers messages between agents' inboxes.
type Messenger interface {
	// Send appends a message of type "message" to one inbox. An unknown or
	// invalid recipient is an error (never a silent loss).
	Send(ctx context.Context, from, to, content string) error
	// Broadcast sends a "broadcast" message to every teammate except from,
	// and returns who it reached.
	Broadcast(ctx context.Context, from, content string) ([]string, error)
}

// InboxReader returns the caller's unread messages as text. commit marks
// them read; the loop calls it only after the text is in the conversation.
type InboxReader interface {
	ReadInbox(ctx context.Context) (text string, commit func() error, err error)
}

// TeamManager is what the lead's team tools need.
type TeamManager interface {
	// Spawn registers and starts a teammate. A refusal (bad name, name
	// taken, queue full) is an error whose text the model reads.
	Spawn(ctx context.Context, name, role, prompt string) error
	// Describe renders the registry as text for the model.
	Describe(ctx context.Context) (string, error)
}
