package team

import (
	"sync"

	"github.com/agentteam/agentteam/inbox"
)

// inboxIndexes are what this process has read of the inboxes the
// protocols look into across processes (remote.go): for each, the messages
// that carry a correlation id (requests and their answers), read on from
// where the last look left off (Mailbox.ReadSince), so each message is read
// once over the process's life, not once per look. A new process (a crash,
// a respawn) starts from each inbox's start once, so a request asked before
// it is found.
type inboxIndexes struct {
	store Mailbox

	mu sync.Mutex
	by map[string]*inboxIndex
}

// inboxIndex is one inbox's part; its own lock serialises the reads on, so
// lookers at once read what is new once between them.
type inboxIndex struct {
	mu    sync.Mutex
	since inbox.Since
	msgs  []inbox.Message     // those with a correlation id, in the inbox's order; only appended to
	byID  map[string][]int    // correlation id → their places in msgs
	seen  map[string]struct{} // message ids: a log read again from its start adds none twice
}

func newInboxIndexes(store Mailbox) *inboxIndexes {
	return &inboxIndexes{store: store, by: map[string]*inboxIndex{}}
}

// of is name's index as read so far, without reading on.
func (x *inboxIndexes) of(name string) *inboxIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	ix, ok := x.by[name]
	if !ok {
		ix = &inboxIndex{byID: map[string][]int{}, seen: map[string]struct{}{}}
		x.by[name] = ix
	}
	return ix
}

// read is name's index with what its inbox gained since the last read.
func (x *inboxIndexes) read(name string) (*inboxIndex, error) {
	ix := x.of(name)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	msgs, since, err := x.store.ReadSince(name, ix.since)
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

// all is every indexed message so far, in order; the slice is not changed
// later (the index only appends), so it may be read without the lock.
func (ix *inboxIndex) all() []inbox.Message {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.msgs[:len(ix.msgs):len(ix.msgs)]
}

// find is the last indexed message with correlation id id for which ok
// holds.
func (ix *inboxIndex) find(id string, ok func(inbox.Message) bool) (inbox.Message, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	places := ix.byID[id]
	for i := len(places) - 1; i >= 0; i-- {
		if m := ix.msgs[places[i]]; ok(m) {
			return m, true
		}
	}
	return inbox.Message{}, false
}

// has reports whether a message of type typ with correlation id id is indexed.
func (ix *inboxIndex) has(id string, typ inbox.MessageType) bool {
	_, ok := ix.find(id, func(m inbox.Message) bool { return m.Type == typ })
	return ok
}

// unansweredIn is, as unanswered (protocols.go), the last request of type
// reqType from from in requests that replies holds no replyType to. replies
// is read on only while what this process read of it so far leaves such a
// request unanswered: a teammate with none left open costs no read of it.
func (x *inboxIndexes) unansweredIn(requests, replies string, reqType, replyType inbox.MessageType, from string) (string, error) {
	mate, err := x.read(requests)
	if err != nil {
		return "", err
	}
	var asked []string
	for _, m := range mate.all() {
		if m.Type == reqType && m.From == from {
			asked = append(asked, m.CorrelationID)
		}
	}
	if len(asked) == 0 {
		return "", nil
	}
	open := func(ix *inboxIndex) string {
		for i := len(asked) - 1; i >= 0; i-- {
			if !ix.has(asked[i], replyType) {
				return asked[i]
			}
		}
		return ""
	}
	if open(x.of(replies)) == "" {
		return "", nil
	}
	lead, err := x.read(replies)
	if err != nil {
		return "", err
	}
	return open(lead), nil
}
