package permgate

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/tools"
)

// Reviewer is the lead's review_permission service when it answers
// teammates' asks; nil otherwise.
func (p *Service) Reviewer() tools.PermissionReviewer {
	if p == nil || p.opts.Delegate != DelegateLead {
		return nil
	}
	return p
}

// ReviewPermission is the lead's answer to a teammate's ask
// (tools.PermissionReviewer).
func (p *Service) ReviewPermission(ctx context.Context, from, id string, approve bool, reason string) (string, error) {
	return p.Answer(ctx, from, strings.TrimSpace(id), approve, false, reason)
}

// Answer answers an open ask in this process: from is who was
// asked (the lead, or the person in the TUI). The answer is appended to the
// asker's inbox, where its waiting call finds it, as it finds one written
// by `agentteam approve` from another process. always adds the ask's rule
// while the team runs (the caller writes it to the project file).
func (p *Service) Answer(ctx context.Context, from, id string, approve, always bool, reason string) (string, error) {
	return p.answerPermission(ctx, from, id, approve, always, false, reason)
}

// AllowForSession allows the open ask id as the person, and with it every
// command its prefix rule allows (Payload.Prefix: go test *)
// while the team runs; an ask with no prefix rule is refused.
func (p *Service) AllowForSession(ctx context.Context, id string) (string, error) {
	prefix := ""
	for _, a := range p.Pending() {
		if a.RequestID == id {
			prefix = a.Prefix
		}
	}
	if prefix == "" {
		return "", fmt.Errorf("the ask %s has no wider rule to allow for this session: allow it once or always", id)
	}
	text, err := p.answerPermission(ctx, inbox.UserName, id, true, false, true, "")
	if err != nil {
		return "", err
	}
	return text + " " + prefix + " is allowed while the team runs.", nil
}

// answerPermission is Answer; session allows the ask's prefix
// rule while the team runs.
func (p *Service) answerPermission(ctx context.Context, from, id string, approve, always, session bool, reason string) (string, error) {
	if p == nil {
		return "", fmt.Errorf("this team asks nobody for permission")
	}
	r, ok := p.d.Requests.Get(id)
	if !ok || r.Kind != event.RequestPermission {
		if text, found, err := p.relay.answer(ctx, from, id, approve, always, session, reason); found {
			return text, err
		}
		return "", fmt.Errorf("there is no permission ask waiting with request id %q", id)
	}
	if r.To != from {
		return "", fmt.Errorf("the ask %s is for %s to answer, not %s", id, answererWords(r.To), from)
	}
	pl := Payload{RequestID: id, Approve: protocol.Bool(approve), Always: always && from == inbox.UserName,
		Session: session && approve && from == inbox.UserName, Reason: reason, By: from}
	if pl.Always {
		pl.Rule = p.ruleOf(id)
	}
	msg := inbox.Message{Type: TypeResponse, From: from, To: r.From, CorrelationID: id, Content: answerText(approve, from, reason)}
	if err := p.d.Requests.Send(ctx, msg, pl); err != nil {
		return "", err
	}
	if approve {
		return fmt.Sprintf("Allowed %s's call (request %s); it runs now.", r.From, id), nil
	}
	return fmt.Sprintf("Denied %s's call (request %s); it is told why.", r.From, id), nil
}

// Pending are the asks this process waits on, oldest first.
func (p *Service) Pending() []Payload {
	if p == nil {
		return nil
	}
	var out []Payload
	for _, r := range p.d.Requests.List() {
		if r.Kind != event.RequestPermission {
			continue
		}
		if p, ok := p.pendingAsk(r.ID); ok {
			out = append(out, p)
		}
	}
	return append(out, p.relay.pending()...)
}

// requestText asks the lead or the person to allow a tool call.
func requestText(from, to, what, why, id, diff string) string {
	s := fmt.Sprintf("%s asks permission to run %s (%s; request %s).", from, what, why, id)
	if diff != "" {
		s += "\nThe change it would make:\n" + event.Clip(diff, 16<<10)
	}
	if to == "lead" {
		return s + fmt.Sprintf("\nAnswer with review_permission(request_id=%q, approve=true or false, reason=...). Allow only what the work needs; deny rules cannot be overridden.", id)
	}
	return s + fmt.Sprintf("\nAnswer with `agentteam approve %s` (--always to allow it from now on) or `agentteam deny %s REASON`.", id, id)
}

// answerText tells the asker the answer to its ask.
func answerText(approve bool, by, reason string) string {
	s := fmt.Sprintf("%s allowed your tool call.", answererWords(by))
	if !approve {
		s = fmt.Sprintf("%s denied your tool call.", answererWords(by))
	}
	if reason != "" {
		s += " Reason: " + reason
	}
	return s
}
