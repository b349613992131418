// Package protocol is the team's protocol requests, and the shutdown and
// plan approval protocols over them. Each request (shutdown, plan
// approval, handoff, permission ask) is opened in the request table,
// logged as events, told by inbox messages and closed with an outcome.
//
//   - A request has an id, a kind, its parties, a deadline and an outcome,
//     and lives in the table (team/request) while it is open.
//   - Each reply's correlation_id is its request's id, which the request
//     also carries as payload.request_id.
//   - A message is appended and its event emitted under one lock (Hold):
//     the one asked, woken by the append, answers only once the question
//     is told.
//   - Shutdown: the lead (or the person) asks a teammate to stop; a
//     working one answers, an idle one's runtime answers for it, one that
//     does not answer in time is stopped (Shutdowns).
//   - Plan approval: a plan-mode teammate may only read until the lead
//     (or the person) approves the plan it submits (Plans).
//   - A teammate another process runs is reached through the inboxes: its
//     process adopts the request from them (remote.go).
package protocol

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/request"
)

// Appender is all the requests need of the inboxes.
type Appender interface {
	Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error)
}

// Requests are the team's protocol requests: the table of the open ones,
// with one timer each, and how a request is logged and its messages sent.
type Requests struct {
	table  *request.Table
	events event.Sink
	store  Appender
	notify func() // a message arrived: whoever waits for the team to settle looks again
	// sending holds a message's append and its event together.
	sending sync.Mutex
}

// New is the requests of a team that logs to events, sends through store
// and calls notify after each message it sends.
func New(events event.Sink, store Appender, notify func()) *Requests {
	return &Requests{table: request.NewTable(), events: events, store: store, notify: notify}
}

// NewID is short enough for a model to copy: "shutdown-1a2b3c4d".
func NewID(kind event.RequestKind) string {
	prefix, _, _ := strings.Cut(string(kind), "_")
	return prefix + "-" + uuid.NewString()[:8]
}

// Open logs a new request of ref's kind and parties (text is what it asks
// about; ref.ID, if empty, is a new id), then registers it in the table,
// whose timer runs onExpire if no answer closes it by the deadline.
// Without onExpire the table arms no timer: the request's owner waits for
// the deadline itself (a handoff, one deadline per step).
func (rq *Requests) Open(ref event.RequestRef, text string, timeout time.Duration, onExpire func(request.Request)) (event.RequestRef, error) {
	if ref.ID == "" {
		ref.ID = NewID(ref.RequestKind)
	}
	opened := time.Now().UTC()
	rq.events.Emit(event.Event{Agent: SubjectOf(ref), Payload: event.RequestOpened{RequestRef: ref, Deadline: opened.Add(timeout), Text: text}})
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To, Opened: opened}
	armed := timeout
	if onExpire == nil {
		armed = 0
	}
	if _, err := rq.table.Open(r, armed, onExpire); err != nil {
		rq.Answered(SubjectOf(ref), ref, event.ByRuntime, event.OutcomeFailed, err.Error())
		return ref, err
	}
	return ref, nil
}

// Reopen registers a request under a known id (a resumed team's, whose
// opening is already in the log).
func (rq *Requests) Reopen(ref event.RequestRef, timeout time.Duration, onExpire func(request.Request)) {
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To}
	_, _ = rq.table.Open(r, timeout, onExpire) // refused only once the team is stopping
}

// Answer closes a teammate's open request of a kind with outcome o; it
// reports false if it was already closed (answered, timed out) or is not
// of that kind and teammate.
func (rq *Requests) Answer(id string, kind event.RequestKind, teammate string, o event.Outcome) (event.RequestRef, bool) {
	r, ok := rq.table.Answer(id, TeammateMatch(kind, teammate), o)
	return RefOf(r), ok
}

// AnswerMatch closes request id with outcome o if it fits m.
func (rq *Requests) AnswerMatch(id string, m request.Match, o event.Outcome) (request.Request, bool) {
	return rq.table.Answer(id, m, o)
}

// OpenFor returns the id of a teammate's open request of a kind, or "".
func (rq *Requests) OpenFor(kind event.RequestKind, teammate string) string {
	r, _ := rq.table.Find(TeammateMatch(kind, teammate))
	return r.ID
}

// Get is the open request id.
func (rq *Requests) Get(id string) (request.Request, bool) { return rq.table.Get(id) }

// List is the open requests.
func (rq *Requests) List() []request.Request { return rq.table.List() }

// Close refuses new requests and waits for expiry callbacks already running.
func (rq *Requests) Close() { rq.table.Close() }

// Answered logs that a request ended with an answer (by the one asked,
// the lead, the person or ByRuntime), or failed before one.
func (rq *Requests) Answered(agent string, ref event.RequestRef, by string, outcome event.Outcome, reason string) {
	rq.events.Emit(event.Event{Agent: agent, Payload: event.RequestAnswered{RequestRef: ref, By: by, Outcome: outcome, Reason: reason}})
}

// Expired logs that a request's deadline passed, and what was done then.
func (rq *Requests) Expired(agent string, ref event.RequestRef, outcome event.Outcome, reason string) {
	rq.events.Emit(event.Event{Agent: agent, Payload: event.RequestExpired{RequestRef: ref, Outcome: outcome, Reason: reason}})
}

// Send delivers a protocol message m (its correlation id set) with its payload.
func (rq *Requests) Send(ctx context.Context, m inbox.Message, payload any) error {
	m, err := WithPayload(m, payload)
	if err != nil {
		return err
	}
	rq.sending.Lock()
	defer rq.sending.Unlock()
	return rq.SendHeld(ctx, m)
}

// Hold takes the sending lock until release is called: a request opened
// and told under it is found open by the one asked only once it is told.
func (rq *Requests) Hold() (release func()) {
	rq.sending.Lock()
	return rq.sending.Unlock
}

// SendHeld is Send for a caller that holds the sending lock (Hold).
func (rq *Requests) SendHeld(ctx context.Context, m inbox.Message) error {
	m, err := rq.store.Append(ctx, m.To, m)
	if err != nil {
		return err
	}
	rq.events.Emit(event.Event{Payload: event.Delivered(m)})
	rq.notify()
	return nil
}

// WithPayload is m carrying payload as JSON.
func WithPayload(m inbox.Message, payload any) (inbox.Message, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return m, err
	}
	m.Payload = raw
	return m, nil
}

// RefOf names a request of the table as the events do.
func RefOf(r request.Request) event.RequestRef {
	return event.RequestRef{ID: r.ID, RequestKind: r.Kind, From: r.From, To: r.To}
}

// SubjectOf is the agent a request's events are about: the teammate asked
// to shut down, the author of a plan, the sender of a handoff.
func SubjectOf(ref event.RequestRef) string {
	if ref.RequestKind == event.RequestShutdown {
		return ref.To
	}
	return ref.From
}

// TeammateMatch fits a teammate's requests of a kind: the shutdown it is
// asked, the plan it submitted.
func TeammateMatch(kind event.RequestKind, teammate string) request.Match {
	if kind == event.RequestShutdown {
		return request.Match{Kind: kind, To: teammate}
	}
	return request.Match{Kind: kind, From: teammate}
}

// Unanswered is the id of the last request of reqType from from among
// requests that has no reply of replyType (by correlation id) among
// replies, or "": what a resumed team reopens.
func Unanswered(requests, replies []inbox.Message, reqType, replyType inbox.MessageType, from string) string {
	answered := map[string]bool{}
	for _, m := range replies {
		if m.Type == replyType {
			answered[m.CorrelationID] = true
		}
	}
	last := ""
	for _, m := range requests {
		if m.Type == reqType && m.From == from && m.CorrelationID != "" && !answered[m.CorrelationID] {
			last = m.CorrelationID
		}
	}
	return last
}

// Bool is a pointer to b, for a payload's approve field.
func Bool(b bool) *bool { return &b }
