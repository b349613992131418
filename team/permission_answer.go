package team

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// reviewer is the lead's review_permission service when it answers
// teammates' asks; nil otherwise.
func (p *permissions) reviewer() tools.PermissionReviewer {
	if p == nil || p.opts.Delegate != DelegateLead {
		return nil
	}
	return p
}

// ReviewPermission is the lead's answer to a teammate's ask
// (tools.PermissionReviewer).
func (p *permissions) ReviewPermission(_ context.Context, from, id string, approve bool, reason string) (string, error) {
	return p.t.AnswerPermission(from, strings.TrimSpace(id), approve, false, reason)
}

// AnswerPermission answers an open ask in this process: from is who was
// asked (the lead, or the person in the TUI). The answer is appended to the
// asker's inbox, where its waiting call finds it, as it finds one written
// by `agentteam approve` from another process. always adds the ask's rule
// while the team runs (the caller writes it to the project file).
func (t *Team) AnswerPermission(from, id string, approve, always bool, reason string) (string, error) {
	return t.answerPermission(from, id, approve, always, false, reason)
}

// AllowForSession allows the open ask id as the person, and with it every
// command its prefix rule allows (PermissionPayload.Prefix: go test *)
// while the team runs; an ask with no prefix rule is refused.
func (t *Team) AllowForSession(id string) (string, error) {
	prefix := ""
	for _, a := range t.PendingPermissions() {
		if a.RequestID == id {
			prefix = a.Prefix
		}
	}
	if prefix == "" {
		return "", fmt.Errorf("the ask %s has no wider rule to allow for this session: allow it once or always", id)
	}
	text, err := t.answerPermission(workspace.UserName, id, true, false, true, "")
	if err != nil {
		return "", err
	}
	return text + " " + prefix + " is allowed while the team runs.", nil
}

// answerPermission is AnswerPermission; session allows the ask's prefix
// rule while the team runs.
func (t *Team) answerPermission(from, id string, approve, always, session bool, reason string) (string, error) {
	if t.perms == nil {
		return "", fmt.Errorf("this team asks nobody for permission")
	}
	r, ok := t.requests.Get(id)
	if !ok || r.Kind != RequestPermission {
		if text, found, err := t.answerRemote(from, id, approve, always, session, reason); found {
			return text, err
		}
		return "", fmt.Errorf("there is no permission ask waiting with request id %q", id)
	}
	if r.To != from {
		return "", fmt.Errorf("the ask %s is for %s to answer, not %s", id, answererWords(r.To), from)
	}
	p := PermissionPayload{RequestID: id, Approve: protocol.Bool(approve), Always: always && from == workspace.UserName,
		Session: session && approve && from == workspace.UserName, Reason: reason, By: from}
	if p.Always {
		p.Rule = t.perms.ruleOf(id)
	}
	msg := inbox.Message{Type: TypePermissionResponse, From: from, To: r.From, CorrelationID: id, Content: permissionAnswerText(approve, from, reason)}
	if err := t.requests.Send(msg, p); err != nil {
		return "", err
	}
	if approve {
		return fmt.Sprintf("Allowed %s's call (request %s); it runs now.", r.From, id), nil
	}
	return fmt.Sprintf("Denied %s's call (request %s); it is told why.", r.From, id), nil
}

// PendingPermissions are the asks this process waits on, oldest first.
func (t *Team) PendingPermissions() []PermissionPayload {
	if t.perms == nil {
		return nil
	}
	var out []PermissionPayload
	for _, r := range t.requests.List() {
		if r.Kind != RequestPermission {
			continue
		}
		if p, ok := t.perms.pendingAsk(r.ID); ok {
			out = append(out, p)
		}
	}
	return append(out, t.perms.remotePending()...)
}
