package inbox

import (
	"context"
	"sync"
)

// SinceReader reads an inbox on from where an earlier read left off; the
// file store and the NATS store both do.
type SinceReader interface {
	ReadSince(ctx context.Context, name string, since Since) ([]Message, Since, error)
}

// Indexes are what this process has read of the inboxes the team's
// protocols look into across processes: for each, the messages that carry
// a correlation id (requests and their answers), read on from where the
// last look left off (ReadSince), so each message is read once over the
// process's life, not once per look. A new process (a crash, a respawn)
// starts from each inbox's start once, so a request asked before it is
// found.
type Indexes struct {
	store SinceReader

	mu sync.Mutex
	by map[string]*Index
}

// Index is one inbox's part; its own lock serialises the reads on, so
// lookers at once read what is new once between them.
type Index struct {
	mu    sync.Mutex
	since Since
	msgs  []Message           // those with a correlation id, in the inbox's order; only appended to
	byID  map[string][]int    // correlation id → their places in msgs
	seen  map[string]struct{} // message ids: a log read again from its start adds none twice
}

// NewIndexes reads the inboxes of store.
func NewIndexes(store SinceReader) *Indexes {
	return &Indexes{store: store, by: map[string]*Index{}}
}

// Of is name's index as read so far, without reading on.
func (x *Indexes) Of(name string) *Index {
	x.mu.Lock()
	defer x.mu.Unlock()
	ix, ok := x.by[name]
	if !ok {
		ix = &Index{byID: map[string][]int{}, seen: map[string]struct{}{}}
		x.by[name] = ix
	}
	return ix
}

// Read is name's index with what its inbox gained since the last read.
func (x *Indexes) Read(ctx context.Context, name string) (*Index, error) {
	ix := x.Of(name)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	msgs, since, err := x.store.ReadSince(ctx, name, ix.since)
	if err != nil {
		return ix, err
	}
	ix.since = since
	for _, m := range msgs {
		if m.CorrelationID == "" {
			continue
		}
		if _, dup := ix.seen[m.ID]; dup {
			continue
		}
		ix.seen[m.ID] = struct{}{}
		ix.byID[m.CorrelationID] = append(ix.byID[m.CorrelationID], len(ix.msgs))
		ix.msgs = append(ix.msgs, m)
	}
	return ix, nil
}

// All is every indexed message so far, in order; the slice is not changed
// later (the index only appends), so it may be read without the lock.
func (ix *Index) All() []Message {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.msgs[:len(ix.msgs):len(ix.msgs)]
}

// Find is the last indexed message with correlation id id for which ok
// holds.
func (ix *Index) Find(id string, ok func(Message) bool) (Message, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	places := ix.byID[id]
	for i := len(places) - 1; i >= 0; i-- {
		if m := ix.msgs[places[i]]; ok(m) {
			return m, true
		}
	}
	return Message{}, false
}

// Has reports whether a message of type typ with correlation id id is indexed.
func (ix *Index) Has(id string, typ MessageType) bool {
	_, ok := ix.Find(id, func(m Message) bool { return m.Type == typ })
	return ok
}

// UnansweredIn is the id of the last request of type reqType from from in
// inbox requests that inbox replies holds no replyType to, or "". replies
// is read on only while what this process read of it so far leaves such a
// request unanswered: a teammate with none left open costs no read of it.
func (x *Indexes) UnansweredIn(ctx context.Context, requests, replies string, reqType, replyType MessageType, from string) (string, error) {
	mate, err := x.Read(ctx, requests)
	if err != nil {
		return "", err
	}
	var asked []string
	for _, m := range mate.All() {
		if m.Type == reqType && m.From == from {
			asked = append(asked, m.CorrelationID)
		}
	}
	if len(asked) == 0 {
		return "", nil
	}
	open := func(ix *Index) string {
		for i := len(asked) - 1; i >= 0; i-- {
			if !ix.Has(asked[i], replyType) {
				return asked[i]
			}
		}
		return ""
	}
	if open(x.Of(replies)) == "" {
		return "", nil
	}
	lead, err := x.Read(ctx, replies)
	if err != nil {
		return "", err
	}
	return open(lead), nil
}
