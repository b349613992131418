package team

import (
	"context"
	"sync"

	"github.com/agentteam/agentteam/team/event"
)

// inboxes watch over the health of the agents' inboxes: an inbox that
// cannot be read is told to the person, once per distinct error.
type inboxes struct {
	store  Mailbox
	events EventSink

	mu   sync.Mutex
	errs map[string]string // the last error reading each inbox, told once
}

// hasUnread reports whether name's inbox has something to deliver. An
// inbox that cannot be read is reported to the person (once per distinct
// error, as an event) instead of being taken silently as empty.
func (ib *inboxes) hasUnread(ctx context.Context, name string) bool {
	has, err := ib.store.HasUnread(ctx, name)
	ib.health(name, err)
	return err == nil && has
}

// health records whether name's inbox could be read and reports each
// new error once; the same error again says nothing new.
func (ib *inboxes) health(name string, err error) {
	ib.mu.Lock()
	last, had := ib.errs[name]
	switch {
	case err == nil && !had:
		ib.mu.Unlock()
		return
	case err == nil:
		delete(ib.errs, name)
		ib.mu.Unlock()
		return
	case had && last == err.Error():
		ib.mu.Unlock()
		return
	}
	ib.errs[name] = err.Error()
	ib.mu.Unlock()
	ib.events.Emit(event.Event{Agent: name, Payload: failure(event.ClassInbox, "the inbox of "+name+" cannot be read: ", err)})
}

// repaired tells the person that an inbox's read position could not
// be trusted and was set aside: its messages are delivered again from the
// start (the conversation keeps each once, by id).
func (ib *inboxes) repaired(name string, err error) {
	ib.events.Emit(event.Event{Agent: name, Payload: event.Repair{Reason: err.Error()}})
}
