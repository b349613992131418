package team

// hasUnread reports whether name's inbox has something to deliver. An
// inbox that cannot be read is reported to the person (once per distinct
// error, as an event) instead of being taken silently as empty.
func (t *Team) hasUnread(name string) bool {
	has, err := t.store.HasUnread(name)
	t.inboxHealth(name, err)
	return err == nil && has
}

// inboxHealth records whether name's inbox could be read and reports each
// new error once; the same error again says nothing new.
func (t *Team) inboxHealth(name string, err error) {
	t.inboxMu.Lock()
	last, had := t.inboxErrs[name]
	switch {
	case err == nil && !had:
		t.inboxMu.Unlock()
		return
	case err == nil:
		delete(t.inboxErrs, name)
		t.inboxMu.Unlock()
		return
	case had && last == err.Error():
		t.inboxMu.Unlock()
		return
	}
	t.inboxErrs[name] = err.Error()
	t.inboxMu.Unlock()
	t.events.Emit(Event{Agent: name, Payload: failure(ClassInbox, "the inbox of "+name+" cannot be read: ", err)})
}

// inboxRepaired tells the person that an inbox's read position could not
// be trusted and was set aside: its messages are delivered again from the
// start (the conversation keeps each once, by id).
func (t *Team) inboxRepaired(name string, err error) {
	t.events.Emit(Event{Agent: name, Payload: Repair{Reason: err.Error()}})
}
