// Package permgate decides each tool call of a team's agents before it
// runs, and carries the asks a decision cannot make alone.
//
//   - A call is classified as its tool reads it (call.go): a read, a write
//     with the diff it would make, a command; the policy (the person's
//     rules and mode, the rules "allow always" added, on a worker the
//     lead's deny rules) allows, denies or asks.
//   - An ask is a protocol request (team/protocol) sent to whoever
//     answers (the person, the lead, nobody) and waited for in the
//     asker's inbox, where any process may append the answer
//     (`agentteam approve`), until its deadline or the caller's context.
//   - A teammate on a worker asks where it runs; the lead's process shows
//     the person those asks (remote.go) and answers them in the inboxes.
package permgate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/plug/mcp"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Permission message types: an ask goes to whoever answers, the answer to
// the agent that asked (any process may append it: `agentteam approve`).
const (
	TypeRequest  inbox.MessageType = "permission_request"
	TypeResponse inbox.MessageType = "permission_response"
)

// DefaultTimeout bounds the wait for an answer to an ask; then
// the call is denied.
const DefaultTimeout = 5 * time.Minute

// Who answers asks (--permission-delegate).
const (
	DelegateUser = "user" // the person: the TUI, or `agentteam approve` from another terminal
	DelegateLead = "lead" // the lead model answers teammates' asks (review_permission)
	DelegateNone = "none" // nobody: an ask is denied at once, saying what would allow it
	// DelegateTeam: on a worker, whoever the lead's process says in each
	// teammate's spawn request (SpawnRequest.Asks) answers its asks.
	DelegateTeam = "team"
)

// Options say what an agent's tool call may do without asking,
// and who answers when it must ask.
type Options struct {
	Policy permission.Policy
	// Delegate is who answers: DelegateUser, DelegateLead or DelegateNone.
	Delegate string
	// Person: someone at the terminal can answer (chat); with DelegateLead
	// the lead's own asks then go to the person.
	Person bool
	// Timeout bounds each wait for an answer (default DefaultTimeout).
	Timeout time.Duration
	// FollowMode: on a worker whose person set no mode, each teammate runs
	// in the mode its spawn request carries (the lead's), so a chat that
	// asks is not bypassed by a worker's default; Policy.Mode is used for a
	// request that carries none. Either is at most auto-edit: a worker
	// runs yolo only where its person said so.
	FollowMode bool
}

// Payload is the payload of permission_request and
// permission_response; a response carries Approve and Reason.
type Payload struct {
	RequestID string `json:"request_id"`
	// The request: who asks to do what, and the unified diff a write would make.
	Agent   string `json:"agent,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Args    string `json:"args,omitempty"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	Diff    string `json:"diff,omitempty"`
	Rule    string `json:"rule,omitempty"` // the rule "allow always" adds
	// Prefix is the wider rule "allow for this session" adds (a command's
	// program and subcommand: go test *), "" when there is none.
	Prefix   string    `json:"prefix,omitempty"`
	Why      string    `json:"why,omitempty"` // why it asks
	Deadline time.Time `json:"deadline,omitzero"`
	// The response.
	Approve *bool `json:"approve,omitempty"`
	Always  bool  `json:"always,omitempty"`
	// Session: the person allowed the ask's Prefix while the team runs.
	Session bool   `json:"session,omitempty"`
	Reason  string `json:"reason,omitempty"`
	By      string `json:"by,omitempty"` // the person, the lead, or runtime
	// Worker is the worker process whose teammate asks, when it is not the
	// lead's: the ask waits only while that worker's heartbeat lives.
	Worker string `json:"worker,omitempty"`
}

// Service decides every tool call of the team's agents: the policy, the
// rules added by "allow always" while the team runs, and the asks.
type Service struct {
	d    Deps
	opts Options
	mu   sync.Mutex
	// always are rules approved with "allow always" during this run (the
	// command that approved also wrote them to the project file).
	always []permission.Entry
	// pending are the asks waiting for an answer, by request id.
	pending map[string]Payload
	// asks is, on a worker following the team (DelegateTeam), who answers
	// each teammate's asks and how long it waits, as its spawn request said.
	asks map[string]teamAsks
	// relay is, in the lead's process, the asks of teammates on workers.
	relay *relay
	// leadDeny are, on a worker, the lead's deny rules each teammate's
	// spawn request carried, added to this worker's (deny.go).
	leadDeny map[string][]permission.Entry
}

func (p *Service) ruleOf(id string) string {
	r, _ := p.pendingAsk(id)
	return r.Rule
}

func (p *Service) pendingAsk(id string) (Payload, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.pending[id]
	if !ok {
		r, ok = p.relay.get(id)
	}
	return r, ok
}

func (p *Service) setPending(id string, r *Payload) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r == nil {
		delete(p.pending, id)
		return
	}
	p.pending[id] = *r
}

// Deps are what the service needs of the team it decides for.
type Deps struct {
	Requests *protocol.Requests
	Events   event.Sink
	Inboxes  Watcher
	Indexes  *inbox.Indexes
	// ReadOnly reports whether a tool of an MCP server only reads (the
	// person's configuration says so); any other is asked about as a
	// command is.
	ReadOnly func(tool string) bool
	// Runs reports whether this process runs teammate name.
	Runs func(name string) bool
	// Failure is the event payload of a step that err ended.
	Failure func(class event.ErrorClass, prefix string, err error) event.Failure
	// Hosts is the team across hosts; nil on one host.
	Hosts Hosts
	// PollInterval is how often the lead's process looks at the asks
	// teammates on workers make.
	PollInterval time.Duration
}

// Watcher wakes a waiting ask when the asker's inbox gains a message.
type Watcher interface {
	Watch(ctx context.Context, name string) <-chan struct{}
}

// Hosts is what the asks need of a team across hosts.
type Hosts interface {
	// ID is this process's worker id.
	ID() string
	// Lead reports whether this process runs the lead.
	Lead() bool
	// Alive reports whether worker's heartbeat lives (true when unknown).
	Alive(worker string) bool
}

// New is the service deciding by o (nil: every tool call runs, and New
// returns nil).
func New(o *Options, d Deps) *Service {
	if o == nil {
		return nil
	}
	opts := *o
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	switch opts.Delegate {
	case DelegateUser, DelegateLead, DelegateNone, DelegateTeam:
	default:
		opts.Delegate = DelegateNone
		if opts.Person {
			opts.Delegate = DelegateUser
		}
	}
	return &Service{d: d, opts: opts, pending: map[string]Payload{}, asks: map[string]teamAsks{}, relay: &relay{d: d, shown: map[string]Payload{}},
		leadDeny: map[string][]permission.Entry{}}
}

// Policy is agent's policy: the process's, in the lead's mode on a worker
// that follows it (Options.FollowMode) but never yolo there,
// else in the stricter of the two.
func (p *Service) Policy(agent string) permission.Policy {
	p.mu.Lock()
	defer p.mu.Unlock()
	pol := p.opts.Policy
	if a, ok := p.asks[agent]; ok && a.mode != "" {
		if p.opts.FollowMode {
			pol.Mode = a.mode
		} else {
			// A worker's own mode never loosens the lead's: the stricter holds.
			pol.Mode = stricterMode(pol.Mode, a.mode)
		}
	}
	if p.opts.FollowMode {
		// Nobody said yolo on this worker: a spawn cannot ask it for one.
		pol.Mode = stricterMode(pol.Mode, permission.ModeAutoEdit)
	}
	pol.Allow = append(append([]permission.Entry(nil), pol.Allow...), p.always...)
	if d := p.leadDeny[agent]; len(d) > 0 {
		pol.Deny = append(append([]permission.Entry(nil), pol.Deny...), d...)
	}
	return pol
}

// stricterMode is whichever of a and b asks more (ask, then auto-edit,
// then yolo); an empty or unknown one is the other.
func stricterMode(a, b permission.Mode) permission.Mode {
	rank := map[permission.Mode]int{permission.ModeAsk: 0, permission.ModeAutoEdit: 1, permission.ModeYolo: 2}
	ra, oka := rank[a]
	rb, okb := rank[b]
	switch {
	case !oka:
		return b
	case !okb || ra <= rb:
		return a
	}
	return b
}

func (p *Service) addAlways(rule string) {
	r, err := permission.ParseRule(rule)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.always = append(p.always, permission.Entry{Rule: r, From: "allowed always"})
}

// answerer is who answers agent's asks, "" when nobody can.
func (p *Service) answerer(agent string) string {
	switch {
	case p.opts.Delegate == DelegateTeam:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.asks[agent].to
	case p.opts.Delegate == DelegateLead && agent != inbox.LeadName:
		return inbox.LeadName
	case p.opts.Delegate == DelegateUser || (p.opts.Delegate == DelegateLead && p.opts.Person):
		return inbox.UserName
	}
	return ""
}

// Gate is agent's permission check, for its tool set; nil without a policy
// (every call runs, as before permissions existed).
func (p *Service) Gate(agent string, ws *workspace.Workspace) tools.PermissionGate {
	if p == nil {
		return nil
	}
	return &permissionGate{p: p, agent: agent, ws: ws}
}

// permissionGate is one agent's check before each of its tool calls.
type permissionGate struct {
	p     *Service
	agent string
	// ws is the agent's own workspace (a worktree teammate's worktree): its
	// tools read paths in it, so the gate must too, and writes inside it
	// are the agent's own work.
	ws *workspace.Workspace
}

// Permit decides one call; an ask blocks until it is answered, the
// deadline passes or ctx ends (tools.PermissionGate).
func (g *permissionGate) Permit(ctx context.Context, tool string, args json.RawMessage) (bool, string) {
	p := g.p
	c, ok := classify(g.ws, g.ws.Root, tool, args)
	switch {
	case !ok && c.refused != "":
		return false, c.refused
	case !ok:
		return true, "" // arguments the tool itself will refuse
	}
	if mcp.IsToolName(tool) && !p.d.ReadOnly(tool) {
		// A server's tool may do anything: asked about as a command is.
		c.Kind, c.Subject = permission.Exec, event.FirstLine(string(args), 400)
	}
	v := p.Policy(g.agent).Decide(c.Call)
	switch v.Decision {
	case permission.Allow:
		if c.Kind != permission.Read {
			g.decided(c, "allowed", byOf(v), v.Why, "")
		}
		return true, ""
	case permission.Deny:
		g.decided(c, "denied", byOf(v), v.Why, "")
		return false, fmt.Sprintf("permission denied: %s is refused by the %s. Do not try to reach the same result another way; if you need it, say so in your reply.", c.what(), v.Why)
	}
	to := p.answerer(g.agent)
	if to == "" {
		hint := headlessHint(c, v)
		g.decided(c, "denied", event.ByRuntime, "nobody to ask: "+v.Why, "")
		return false, hint
	}
	return g.ask(ctx, c, v, to)
}

func byOf(v permission.Verdict) string {
	if v.Entry != nil {
		return "rule"
	}
	return "mode"
}

// decided logs a decision on a call.
func (g *permissionGate) decided(c classified, decision, by, why, id string) {
	g.p.d.Events.Emit(event.Event{Agent: g.agent, Payload: event.Permission{Tool: c.Tool, Subject: c.Subject, Decision: decision,
		By: by, Why: why, RequestID: id, Diff: c.diff}})
}

// ask opens a request, sends the ask to `to` and waits for the answer in
// the asker's inbox, where any process may append it.
func (g *permissionGate) ask(ctx context.Context, c classified, v permission.Verdict, to string) (bool, string) {
	p := g.p
	rq := p.d.Requests
	timeout := p.timeoutFor(g.agent)
	ref, err := rq.Open(event.RequestRef{RequestKind: event.RequestPermission, From: g.agent, To: to}, c.what(), timeout, nil)
	if err != nil {
		return false, "permission denied: the ask could not be made: " + err.Error()
	}
	id := ref.ID
	deadline := time.Now().Add(timeout)
	req := Payload{RequestID: id, Agent: g.agent, Tool: c.Tool, Args: event.Clip(c.args, event.MaxText),
		Diff: c.diff, Rule: permission.Suggest(c.Call).String(), Why: v.Why, Deadline: deadline.UTC()}
	if r, ok := permission.SuggestPrefix(c.Call); ok {
		req.Prefix = r.String()
	}
	if h := p.d.Hosts; h != nil && !h.Lead() {
		req.Worker = h.ID()
	}
	if c.Kind == permission.Exec {
		req.Command = c.Subject
	} else {
		req.Path = c.Subject
	}
	msg := inbox.Message{Type: TypeRequest, From: g.agent, To: to, CorrelationID: id,
		Content: requestText(g.agent, to, c.what(), v.Why, id, c.diff)}
	if err := rq.Send(ctx, msg, req); err != nil {
		if _, open := rq.Answer(id, event.RequestPermission, g.agent, event.OutcomeFailed); open {
			rq.Answered(g.agent, ref, event.ByRuntime, event.OutcomeFailed, "the ask could not be delivered: "+err.Error())
		}
		return false, "permission denied: the ask could not be delivered: " + err.Error()
	}
	g.p.d.Events.Emit(event.Event{Agent: g.agent, Payload: event.Permission{Tool: c.Tool, Subject: c.Subject, Decision: "asked",
		By: to, Why: v.Why, RequestID: id, Diff: c.diff, Prefix: req.Prefix}})
	p.setPending(id, &req)
	resp, outcome, werr := g.wait(ctx, id, to, deadline)
	p.setPending(id, nil)
	if _, open := rq.Answer(id, event.RequestPermission, g.agent, outcome); !open {
		return false, "permission denied: the ask was closed without an answer"
	}
	switch {
	case werr != nil:
		why := "the call was cancelled while it waited for an answer"
		rq.Answered(g.agent, ref, event.ByRuntime, outcome, why)
		g.respondForRuntime(id, why)
		g.decided(c, "denied", event.ByRuntime, why, id)
		return false, "permission denied: " + why
	case outcome == event.OutcomeExpired:
		why := fmt.Sprintf("no answer within %s", timeout)
		rq.Expired(g.agent, ref, outcome, why)
		g.respondForRuntime(id, why)
		g.decided(c, "denied", event.ByRuntime, why, id)
		return false, fmt.Sprintf("permission denied: %s asked %s, who did not answer within %s. Do not retry it unasked; say in your reply what you needed.", c.what(), answererWords(to), timeout)
	}
	by := resp.By
	// Deny rules never change while the team runs, and a call one refuses is
	// never asked about: no answer can allow it.
	approve := resp.Approve != nil && *resp.Approve
	rq.Answered(g.agent, ref, by, outcome, resp.Reason)
	if !approve {
		g.decided(c, "denied", by, resp.Reason, id)
		reason := resp.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return false, fmt.Sprintf("permission denied by %s: %s. Do not try to reach the same result another way.", answererWords(by), reason)
	}
	switch {
	case resp.Always && by == inbox.UserName:
		p.addAlways(req.Rule) // the ask's own rule, whatever the answer says
	case resp.Session && by == inbox.UserName && req.Prefix != "":
		p.addAlways(req.Prefix) // the ask's own prefix, likewise
	}
	g.decided(c, "allowed", by, resp.Reason, id)
	return true, ""
}

// wait returns the answer to request id from the asker's inbox: approved
// or rejected, expired at the deadline, or ctx's error.
func (g *permissionGate) wait(ctx context.Context, id, to string, deadline time.Time) (Payload, event.Outcome, error) {
	d := g.p.d
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := d.Inboxes.Watch(wctx, g.agent) // before the first look: an answer after it wakes us
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		if r, ok := findResponse(ctx, d.Indexes, g.agent, id, to); ok {
			if r.Approve != nil && *r.Approve {
				return r, event.OutcomeApproved, nil
			}
			return r, event.OutcomeRejected, nil
		}
		select {
		case <-wake:
		case <-timer.C:
			return Payload{}, event.OutcomeExpired, nil
		case <-ctx.Done():
			return Payload{}, event.Outcome("cancelled"), ctx.Err()
		}
	}
}

// respondForRuntime closes an ask in the files too, so `agentteam
// requests` no longer lists it and a late approve is refused.
func (g *permissionGate) respondForRuntime(id, why string) {
	p := Payload{RequestID: id, Approve: protocol.Bool(false), Reason: why, By: event.ByRuntime}
	// From the asker's own runtime: on a worker, its credentials may not
	// send as the person or the lead it asked.
	msg := inbox.Message{Type: TypeResponse, From: g.agent, To: g.agent, CorrelationID: id, Content: "Not allowed: " + why}
	ctx := context.Background() // the asking call may be cancelled: the ask is closed all the same
	if err := g.p.d.Requests.Send(ctx, msg, p); err != nil {
		g.p.d.Events.Emit(event.Event{Agent: g.agent, Payload: g.p.d.Failure(event.ClassInbox, "permission response: ", err)})
	}
}

// findResponse is the first answer to request id in name's
// inbox from the one asked, to ("" for anyone). The inbox is read through
// this process's index (inbox.Indexes), on from the last look: a wait woken
// many times, or a relay polling many asks, reads each message once.
func findResponse(ctx context.Context, x *inbox.Indexes, name, id, to string) (Payload, bool) {
	ix, err := x.Read(ctx, name)
	if err != nil {
		return Payload{}, false
	}
	var first Payload
	found := false
	// find walks id's messages newest first; refusing each keeps the oldest answer.
	ix.Find(id, func(m inbox.Message) bool {
		if m.Type != TypeResponse || (to != "" && m.From != to) {
			return false
		}
		var r Payload
		if json.Unmarshal(m.Payload, &r) != nil || r.RequestID != id {
			return false
		}
		if r.By != event.ByRuntime {
			r.By = m.From
		}
		first, found = r, true
		return false
	})
	return first, found
}

func answererWords(name string) string {
	switch name {
	case inbox.UserName:
		return "the person"
	case inbox.LeadName:
		return "the lead"
	case event.ByRuntime:
		return "agentteam"
	}
	return name
}
