package permgate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
)

// relay is, in the lead's process, the asks teammates on workers make of
// the person or the lead (remote.go): found in the inboxes, shown to the
// chat, answered and closed.
type relay struct {
	d  Deps
	mu sync.Mutex
	// shown are the asks waiting for the person the chat was shown, by
	// request id.
	shown map[string]Payload
}

// get is the ask id the chat was shown, if it still waits.
func (p *relay) get(id string) (Payload, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.shown[id]
	return r, ok
}

// RelayRemoteAsks shows the person, in the lead's process, the asks
// teammates on workers make of them, as permission events to the chat only
// (the worker logged them), and closes each once answered, expired or
// abandoned, until ctx ends.
func (p *Service) RelayRemoteAsks(ctx context.Context) { p.relay.run(ctx) }

// remoteAsk is an unanswered ask in to's inbox made by a teammate on
// another worker: the request message and its payload.
type remoteAsk struct {
	msg inbox.Message
	req Payload
}

// asks are the asks in to's inbox made on other workers, by request
// id; the inbox is read on from the last look (inbox.Indexes), not whole at
// every poll.
func (p *relay) asks(ctx context.Context, to string) (map[string]remoteAsk, error) {
	ix, err := p.d.Indexes.Read(ctx, to)
	if err != nil {
		return nil, err
	}
	out := map[string]remoteAsk{}
	for _, m := range ix.All() {
		if m.Type != TypeRequest || m.CorrelationID == "" {
			continue
		}
		var r Payload
		if json.Unmarshal(m.Payload, &r) != nil || r.RequestID != m.CorrelationID || r.Worker == "" || r.Worker == p.d.Hosts.ID() {
			continue
		}
		if inbox.ValidateTeammateName(m.From) != nil || p.d.Runs(m.From) {
			continue
		}
		r.Agent = m.From
		out[r.RequestID] = remoteAsk{msg: m, req: r}
	}
	return out, nil
}

// gone says why an ask made on another worker waits for nobody, "" while it waits.
func (p *relay) gone(r Payload, now time.Time) string {
	switch {
	case !now.Before(r.Deadline):
		return fmt.Sprintf("no answer by its deadline %s", r.Deadline.Local().Format("15:04:05"))
	case !p.d.Hosts.Alive(r.Worker):
		return fmt.Sprintf("the worker %s that asked is gone", r.Worker)
	}
	return ""
}

// answer is Answer for an ask made on another worker; ok
// is false when there is no such ask in from's inbox.
func (p *relay) answer(ctx context.Context, from, id string, approve, always, session bool, reason string) (string, bool, error) {
	if p.d.Hosts == nil || (from != inbox.UserName && from != inbox.LeadName) {
		return "", false, nil
	}
	asks, err := p.asks(ctx, from)
	if err != nil {
		return "", true, err
	}
	a, ok := asks[id]
	if !ok {
		return "", false, nil
	}
	if _, answered := findResponse(ctx, p.d.Indexes, a.req.Agent, id, ""); answered {
		return "", true, fmt.Errorf("the ask %s was already answered", id)
	}
	if why := p.gone(a.req, time.Now()); why != "" {
		return "", true, fmt.Errorf("nobody waits for the ask %s any more: %s", id, why)
	}
	pl := Payload{RequestID: id, Approve: protocol.Bool(approve), Always: always && from == inbox.UserName,
		Session: session && approve && from == inbox.UserName, Reason: reason, By: from}
	if pl.Always {
		pl.Rule = a.req.Rule
	}
	msg := inbox.Message{Type: TypeResponse, From: from, To: a.req.Agent, CorrelationID: id, Content: answerText(approve, from, reason)}
	if err := p.d.Requests.Send(ctx, msg, pl); err != nil {
		return "", true, err
	}
	if approve {
		return fmt.Sprintf("Allowed %s's call on worker %s (request %s); it runs now.", a.req.Agent, a.req.Worker, id), true, nil
	}
	return fmt.Sprintf("Denied %s's call on worker %s (request %s); it is told why.", a.req.Agent, a.req.Worker, id), true, nil
}

// run shows the person the asks made of them until ctx ends (RelayRemoteAsks).
func (p *relay) run(ctx context.Context) {
	wake := p.d.Inboxes.Watch(ctx, inbox.UserName) // before the first look
	tick := time.NewTicker(p.d.PollInterval)       // answers in other inboxes, deadlines, heartbeats
	defer tick.Stop()
	closed := map[string]bool{} // asks found answered or gone: never looked at again
	for {
		p.look(ctx, time.Now(), closed)
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// look tells the chat of each new ask made of the person on
// another worker, and of each shown before that nobody waits for now.
func (p *relay) look(ctx context.Context, now time.Time, closed map[string]bool) {
	asks, err := p.asks(ctx, inbox.UserName)
	if err != nil {
		return // the next look tries again
	}
	p.mu.Lock()
	shown := make(map[string]Payload, len(p.shown))
	for id, r := range p.shown {
		shown[id] = r
	}
	p.mu.Unlock()
	for id, a := range asks {
		if _, ok := shown[id]; ok || closed[id] {
			continue
		}
		if _, answered := findResponse(ctx, p.d.Indexes, a.req.Agent, id, ""); answered || p.gone(a.req, now) != "" {
			closed[id] = true
			continue
		}
		p.mu.Lock()
		p.shown[id] = a.req
		p.mu.Unlock()
		subject := a.req.Command
		if subject == "" {
			subject = a.req.Path
		}
		p.d.Events.Notify(event.Event{Agent: a.req.Agent, Payload: event.Permission{Tool: a.req.Tool, Subject: subject, Decision: "asked",
			By: inbox.UserName, Why: a.req.Why + " · on worker " + a.req.Worker, RequestID: id, Diff: a.req.Diff, Prefix: a.req.Prefix}})
	}
	for id, r := range shown {
		decision, by, why := "", "", ""
		if resp, answered := findResponse(ctx, p.d.Indexes, r.Agent, id, ""); answered {
			decision, by, why = "denied", resp.By, resp.Reason
			if resp.Approve != nil && *resp.Approve {
				decision = "allowed"
			}
		} else if gone := p.gone(r, now); gone != "" {
			decision, by, why = "denied", event.ByRuntime, gone
		} else {
			continue
		}
		closed[id] = true
		p.mu.Lock()
		delete(p.shown, id)
		p.mu.Unlock()
		p.d.Events.Notify(event.Event{Agent: r.Agent, Payload: event.Permission{Tool: r.Tool, Decision: decision, By: by, Why: why, RequestID: id}})
	}
}

// pending are the asks of teammates on workers the person was shown, oldest first.
func (p *relay) pending() []Payload {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Payload, 0, len(p.shown))
	for _, r := range p.shown {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Payload) int { return a.Deadline.Compare(b.Deadline) })
	return out
}
