package team

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/request"
)

// The team's protocols — shutdown (shutdown.go), plan approval
// (plan.go) and handoff (handoff.go) — are requests: each has an id, a
// kind, its parties, a deadline and an outcome, and lives in the team's
// request table while it is open. Each reply's correlation_id is its
// request's id, which the request also carries as payload.request_id.

// requests are the team's protocol requests: the table of the open ones,
// with one timer each, and how a request is logged and its messages sent.
type requests struct {
	table  *request.Table
	events EventSink
	store  mailAppender
	notify func() // a message arrived: whoever waits for the team to settle looks again
	// sending holds a message's append and its event together: the one
	// asked, woken by the append, answers only once the question is told.
	sending sync.Mutex
}

func newRequests(events EventSink, store mailAppender, notify func()) *requests {
	return &requests{table: request.NewTable(), events: events, store: store, notify: notify}
}

// newRequestID is short enough for a model to copy: "shutdown-1a2b3c4d".
func newRequestID(kind RequestKind) string {
	prefix, _, _ := strings.Cut(string(kind), "_")
	return prefix + "-" + uuid.NewString()[:8]
}

// open logs a new request of ref's kind and parties (text is what it asks
// about; ref.ID, if empty, is a new id), then registers it in the table,
// whose timer runs onExpire if no answer closes it by the deadline.
// Without onExpire the table arms no timer: the request's owner waits for
// the deadline itself (a handoff, one deadline per step).
func (rq *requests) open(ref RequestRef, text string, timeout time.Duration, onExpire func(request.Request)) (RequestRef, error) {
	if ref.ID == "" {
		ref.ID = newRequestID(ref.RequestKind)
	}
	opened := time.Now().UTC()
	rq.events.Emit(Event{Agent: subjectOf(ref), Payload: RequestOpened{RequestRef: ref, Deadline: opened.Add(timeout), Text: text}})
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To, Opened: opened}
	armed := timeout
	if onExpire == nil {
		armed = 0
	}
	if _, err := rq.table.Open(r, armed, onExpire); err != nil {
		rq.answered(subjectOf(ref), ref, ByRuntime, OutcomeFailed, err.Error())
		return ref, err
	}
	return ref, nil
}

// reopen registers a request under a known id (a resumed team's, whose
// opening is already in the log).
func (rq *requests) reopen(ref RequestRef, timeout time.Duration, onExpire func(request.Request)) {
	r := request.Request{ID: ref.ID, Kind: ref.RequestKind, From: ref.From, To: ref.To}
	_, _ = rq.table.Open(r, timeout, onExpire) // refused only once the team is stopping
}

// answer closes a teammate's open request of a kind with outcome o; it
// reports false if it was already closed (answered, timed out) or is not
// of that kind and teammate.
func (rq *requests) answer(id string, kind RequestKind, teammate string, o Outcome) (RequestRef, bool) {
	r, ok := rq.table.Answer(id, teammateMatch(kind, teammate), o)
	return refOf(r), ok
}

// openFor returns the id of a teammate's open request of a kind, or "".
func (rq *requests) openFor(kind RequestKind, teammate string) string {
	r, _ := rq.table.Find(teammateMatch(kind, teammate))
	return r.ID
}

// answered logs that a request ended with an answer (by the one asked,
// the lead, the person or ByRuntime), or failed before one.
func (rq *requests) answered(agent string, ref RequestRef, by string, outcome Outcome, reason string) {
	rq.events.Emit(Event{Agent: agent, Payload: RequestAnswered{RequestRef: ref, By: by, Outcome: outcome, Reason: reason}})
}

// expired logs that a request's deadline passed, and what was done then.
func (rq *requests) expired(agent string, ref RequestRef, outcome Outcome, reason string) {
	rq.events.Emit(Event{Agent: agent, Payload: RequestExpired{RequestRef: ref, Outcome: outcome, Reason: reason}})
}

// send delivers a protocol message m (its correlation id set) with its payload.
func (rq *requests) send(m inbox.Message, payload any) error {
	m, err := withPayload(m, payload)
	if err != nil {
		return err
	}
	rq.sending.Lock()
	defer rq.sending.Unlock()
	return rq.sendLocked(m)
}

// withPayload is m carrying payload as JSON.
func withPayload(m inbox.Message, payload any) (inbox.Message, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return m, err
	}
	m.Payload = raw
	return m, nil
}

// sendLocked is send for a caller that holds rq.sending.
func (rq *requests) sendLocked(m inbox.Message) error {
	m, err := rq.store.Append(m.To, m)
	if err != nil {
		return err
	}
	rq.events.Emit(Event{Payload: Delivered(m)})
	rq.notify()
	return nil
}

// refOf names a request of the table as the events do.
func refOf(r request.Request) RequestRef {
	return RequestRef{ID: r.ID, RequestKind: r.Kind, From: r.From, To: r.To}
}

// subjectOf is the agent a request's events are about: the teammate asked
// to shut down, the author of a plan, the sender of a handoff.
func subjectOf(ref RequestRef) string {
	if ref.RequestKind == RequestShutdown {
		return ref.To
	}
	return ref.From
}

// teammateMatch fits a teammate's requests of a kind: the shutdown it is
// asked, the plan it submitted.
func teammateMatch(kind RequestKind, teammate string) request.Match {
	if kind == RequestShutdown {
		return request.Match{Kind: kind, To: teammate}
	}
	return request.Match{Kind: kind, From: teammate}
}

// unanswered is the id of the last request of reqType from from among
// requests that has no reply of replyType (by correlation id) among
// replies, or "": what a resumed team reopens.
func unanswered(requests, replies []inbox.Message, reqType, replyType inbox.MessageType, from string) string {
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

// member returns a teammate this process runs.
func (r *roster) member(name string) (*member, error) {
	t := r.t
	r.mu.Lock()
	m, ok := r.members[name]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := CheckRecipient(t.reg, name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s is not run by this agentteam process", name)
}

func (r *roster) statusOf(m *member) Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m.status
}

// expiredMember is the teammate of a request whose deadline passed, or
// nil when the team is stopping (or the teammate is not run here).
func (r *roster) expiredMember(name string) *member {
	t := r.t
	if t.stopped() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.members[name]
}

func boolp(b bool) *bool { return &b }
