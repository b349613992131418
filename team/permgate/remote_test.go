package permgate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
)

// countingReads counts the messages read of one inbox.
type countingReads struct {
	*inbox.Store
	name string
	n    *atomic.Int64
}

func (c countingReads) ReadSince(ctx context.Context, name string, since inbox.Since) ([]inbox.Message, inbox.Since, error) {
	msgs, next, err := c.Store.ReadSince(ctx, name, since)
	if name == c.name {
		c.n.Add(int64(len(msgs)))
	}
	return msgs, next, err
}

// discard is an event log that keeps nothing.
type discard struct{}

func (discard) Emit(event.Event)   {}
func (discard) Notify(event.Event) {}

// leadHost is the lead's process of a team across hosts whose workers all live.
type leadHost struct{}

func (leadHost) ID() string        { return "leads" }
func (leadHost) Lead() bool        { return true }
func (leadHost) Alive(string) bool { return true }

// newTestService is the lead's process's gate over store, its inboxes
// indexed through reads.
func newTestService(o *Options, store *inbox.Store, reads inbox.SinceReader) *Service {
	return New(o, Deps{
		Requests: protocol.New(discard{}, store, func() {}),
		Events:   discard{},
		Inboxes:  store,
		Indexes:  inbox.NewIndexes(reads),
		Runs:     func(string) bool { return false },
		Failure: func(class event.ErrorClass, prefix string, err error) event.Failure {
			return event.Failure{Class: class, Text: prefix + err.Error()}
		},
		Hosts:        leadHost{},
		PollInterval: time.Hour,
	})
}

// The lead's process relays the person the asks of a teammate on another
// worker and looks, at every poll, whether each is answered in the
// teammate's inbox. That inbox is read on from the last look, not whole
// per ask per poll: with n messages in it, k asks shown and p polls (one
// new message each), the look reads about n+p messages where the old code
// read k·p·n (here 10·20·200 = 40,000); the bound is 2(n+p). The answer
// given meanwhile is still found, first one first.
func TestRemoteAsksReadTheTeammatesInboxLinearly(t *testing.T) {
	const n, k, p = 200, 10, 20
	store := inbox.NewStore(t.TempDir())
	var reads atomic.Int64
	counted := countingReads{Store: store, name: "alice", n: &reads}
	lead := newTestService(&Options{Delegate: DelegateUser, Person: true}, store, counted)
	appendTo := func(to string, m inbox.Message, payload any) {
		t.Helper()
		if payload != nil {
			raw, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			m.Payload = raw
		}
		m.To = to
		if _, err := store.Append(t.Context(), to, m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		appendTo("alice", inbox.Message{Type: inbox.TypeMessage, From: inbox.LeadName, Content: fmt.Sprintf("note %d", i)}, nil)
	}
	for i := range k {
		id := fmt.Sprintf("permission-w9-%d", i)
		appendTo(inbox.UserName, inbox.Message{Type: TypeRequest, From: "alice", CorrelationID: id, Content: "may I?"},
			Payload{RequestID: id, Tool: "bash", Command: "make", Worker: "w9", Deadline: time.Now().Add(time.Hour)})
	}
	yes, no := true, false
	closed := map[string]bool{}
	for i := range p {
		if i == p/2 { // the person answers one ask twice: the first answer counts
			for _, a := range []*bool{&yes, &no} {
				appendTo("alice", inbox.Message{Type: TypeResponse, From: inbox.UserName, CorrelationID: "permission-w9-3"},
					Payload{RequestID: "permission-w9-3", Approve: a, By: inbox.UserName})
			}
		}
		lead.relay.look(t.Context(), time.Now(), closed)
		appendTo("alice", inbox.Message{Type: inbox.TypeMessage, From: inbox.LeadName, Content: fmt.Sprintf("later %d", i)}, nil)
	}
	if got := len(lead.relay.pending()); got != k-1 {
		t.Errorf("%d asks shown as pending, want %d (one answered)", got, k-1)
	}
	if !closed["permission-w9-3"] {
		t.Error("the answered ask was not closed")
	}
	if r, ok := findResponse(t.Context(), lead.d.Indexes, "alice", "permission-w9-3", ""); !ok || r.Approve == nil || !*r.Approve {
		t.Errorf("the first answer (allow) is not the one found: %+v, %v", r, ok)
	}
	t.Logf("%d messages of alice's inbox read by %d looks at %d asks", reads.Load(), p, k)
	if got, bound := reads.Load(), int64(2*(n+p)); got > bound {
		t.Errorf("the looks read %d messages of alice's inbox, over %d: it is read whole per ask and poll", got, bound)
	}
}

func TestAWorkersModeNeverLoosensTheLeads(t *testing.T) {
	for _, c := range []struct{ worker, lead, want permission.Mode }{
		{permission.ModeYolo, permission.ModeAsk, permission.ModeAsk},
		{permission.ModeAsk, permission.ModeYolo, permission.ModeAsk},
		{permission.ModeAutoEdit, permission.ModeYolo, permission.ModeAutoEdit},
		{permission.ModeYolo, "", permission.ModeYolo},
	} {
		p := New(&Options{Policy: permission.Policy{Mode: c.worker}}, Deps{})
		p.Follow("alice", "", 0, c.lead)
		if got := p.Policy("alice").Mode; got != c.want {
			t.Errorf("worker %s, lead %s: %s, want %s", c.worker, c.lead, got, c.want)
		}
	}
}
