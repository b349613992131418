package permgate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
)

// Permission asks of teammates run on workers (a team across hosts,
// team/hosts). The ask is made where the teammate runs, with that
// process's policy; who answers is the team's choice, which the lead's
// process puts in each spawn request (SpawnRequest.Asks). The ask and its
// answer travel through the inboxes as on one host: the person answers
// with `agentteam approve` from any host on the store or in the lead's
// chat, which shows the ask (relayRemoteAsks); the lead's model with
// review_permission. The lead's process, which has no request of its own
// for it, checks the ask in the inboxes (answerRemote). The ask carries
// its worker's id: once that worker's heartbeat is gone it is abandoned.

// Rules are the lead's rules for a teammate, which travel in every spawn
// request: who answers its asks and how long each waits, the lead's
// permission mode and its deny rules.
type Rules struct {
	Asks       string
	AskTimeout time.Duration
	Mode       permission.Mode
	Deny       []string
}

// RulesFor are the lead's rules for teammate name.
func (p *Service) RulesFor(name string) Rules {
	return Rules{Asks: p.askerOf(name), AskTimeout: p.askTimeout(), Mode: p.modeOf(), Deny: p.denyRules()}
}

// askerOf is who the lead's process has answer name's asks, for its spawn
// request: the person, the lead, or "" (nobody: asks are denied at once).
func (p *Service) askerOf(name string) string {
	if p == nil {
		return ""
	}
	switch to := p.answerer(name); to {
	case inbox.UserName, inbox.LeadName:
		return to
	}
	return ""
}

// teamAsks is, on a worker that follows the team, who answers a
// teammate's asks and how long each waits (0: this worker's own timeout).
type teamAsks struct {
	to      string
	timeout time.Duration
	mode    permission.Mode // the lead's mode, "" when the request carried none
}

// Follow records, on a worker, who answers the asks of teammate name and
// how long each waits, as its spawn request said.
func (p *Service) Follow(name, asks string, timeout time.Duration, mode permission.Mode) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asks[name] = teamAsks{to: asks, timeout: timeout, mode: mode}
}

// modeOf is the lead's process's permission mode, for spawn requests.
func (p *Service) modeOf() permission.Mode {
	if p == nil {
		return ""
	}
	return p.opts.Policy.Mode
}

// timeoutFor is how long an ask of agent waits for its answer: the team's
// on a worker that follows it, else this process's.
func (p *Service) timeoutFor(agent string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.asks[agent]; ok && p.opts.Delegate == DelegateTeam && a.timeout > 0 {
		return a.timeout
	}
	return p.opts.Timeout
}

// askTimeout is the lead's process's wait for an answer, for spawn requests.
func (p *Service) askTimeout() time.Duration {
	if p == nil {
		return 0
	}
	return p.opts.Timeout
}

// CheckAsks refuses who-answers values and waits no lead of ours would send.
func CheckAsks(asks string, timeout time.Duration, mode permission.Mode) error {
	switch asks {
	case "", inbox.UserName, inbox.LeadName:
	default:
		return fmt.Errorf("asks: %q is not user, lead or empty", asks)
	}
	if mode != "" {
		if _, err := permission.ParseMode(string(mode)); err != nil {
			return fmt.Errorf("mode: %w", err)
		}
	}
	if timeout < 0 || timeout > 24*time.Hour {
		return fmt.Errorf("askTimeout: %s is not between 0 and 24h", timeout)
	}
	return nil
}

// remoteAsk is an unanswered ask in to's inbox made by a teammate on
// another worker: the request message and its payload.
type remoteAsk struct {
	msg inbox.Message
	req Payload
}

// remoteAsks are the asks in to's inbox made on other workers, by request
// id; the inbox is read on from the last look (inbox.Indexes), not whole at
// every poll.
func (p *Service) remoteAsks(ctx context.Context, to string) (map[string]remoteAsk, error) {
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

// askGone says why an ask made on another worker waits for nobody, "" while it waits.
func (p *Service) askGone(r Payload, now time.Time) string {
	switch {
	case !now.Before(r.Deadline):
		return fmt.Sprintf("no answer by its deadline %s", r.Deadline.Local().Format("15:04:05"))
	case !p.d.Hosts.Alive(r.Worker):
		return fmt.Sprintf("the worker %s that asked is gone", r.Worker)
	}
	return ""
}

// answerRemote is Answer for an ask made on another worker; ok
// is false when there is no such ask in from's inbox.
func (p *Service) answerRemote(ctx context.Context, from, id string, approve, always, session bool, reason string) (string, bool, error) {
	if p.d.Hosts == nil || (from != inbox.UserName && from != inbox.LeadName) {
		return "", false, nil
	}
	asks, err := p.remoteAsks(ctx, from)
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
	if why := p.askGone(a.req, time.Now()); why != "" {
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

// RelayRemoteAsks shows the person, in the lead's process, the asks
// teammates on workers make of them, as permission events to the chat only
// (the worker logged them), and closes each once answered, expired or
// abandoned, until ctx ends.
func (p *Service) RelayRemoteAsks(ctx context.Context) {
	wake := p.d.Inboxes.Watch(ctx, inbox.UserName) // before the first look
	tick := time.NewTicker(p.d.PollInterval)       // answers in other inboxes, deadlines, heartbeats
	defer tick.Stop()
	closed := map[string]bool{} // asks found answered or gone: never looked at again
	for {
		p.lookRemoteAsks(ctx, time.Now(), closed)
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// lookRemoteAsks tells the chat of each new ask made of the person on
// another worker, and of each shown before that nobody waits for now.
func (p *Service) lookRemoteAsks(ctx context.Context, now time.Time, closed map[string]bool) {
	asks, err := p.remoteAsks(ctx, inbox.UserName)
	if err != nil {
		return // the next look tries again
	}
	p.mu.Lock()
	shown := make(map[string]Payload, len(p.remote))
	for id, r := range p.remote {
		shown[id] = r
	}
	p.mu.Unlock()
	for id, a := range asks {
		if _, ok := shown[id]; ok || closed[id] {
			continue
		}
		if _, answered := findResponse(ctx, p.d.Indexes, a.req.Agent, id, ""); answered || p.askGone(a.req, now) != "" {
			closed[id] = true
			continue
		}
		p.mu.Lock()
		p.remote[id] = a.req
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
		} else if gone := p.askGone(r, now); gone != "" {
			decision, by, why = "denied", event.ByRuntime, gone
		} else {
			continue
		}
		closed[id] = true
		p.mu.Lock()
		delete(p.remote, id)
		p.mu.Unlock()
		p.d.Events.Notify(event.Event{Agent: r.Agent, Payload: event.Permission{Tool: r.Tool, Decision: decision, By: by, Why: why, RequestID: id}})
	}
}

// remotePending are the asks of teammates on workers the person was shown, oldest first.
func (p *Service) remotePending() []Payload {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Payload, 0, len(p.remote))
	for _, r := range p.remote {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Payload) int { return a.Deadline.Compare(b.Deadline) })
	return out
}
