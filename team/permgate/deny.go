package permgate

import (
	"fmt"

	"github.com/agentteam/agentteam/internal/sys/permission"
)

// The lead's deny rules follow its teammates onto workers: a worker adds
// them to its own policy for the teammates the lead's process spawned
// (SpawnRequest.Deny), where deny beats every allow, ask and mode. The
// lead's allow and ask rules never travel: what runs on a worker's
// machine without asking is its person's choice, not the lead's.

// maxDenyRules bounds the deny rules one spawn request may carry, and
// maxRuleBytes each one: they come off the wire.
const (
	maxDenyRules = 256
	maxRuleBytes = 1024
)

// leadDenyFrom is what a decision says of a rule that came from the lead.
const leadDenyFrom = "the lead's deny rule"

// denyRules are the lead's process's deny rules as text, for spawn requests.
func (p *Service) denyRules() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, e := range p.opts.Policy.Deny {
		out = append(out, e.Rule.String())
	}
	return out
}

// FollowDeny adds, on a worker, the lead's deny rules to teammate name's
// policy (rules checked by CheckDeny).
func (p *Service) FollowDeny(name string, rules []string) {
	if p == nil {
		return
	}
	var es []permission.Entry
	for _, s := range rules {
		if r, err := permission.ParseRule(s); err == nil {
			es = append(es, permission.Entry{Rule: r, From: leadDenyFrom})
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(es) == 0 {
		delete(p.leadDeny, name)
		return
	}
	p.leadDeny[name] = es
}

// CheckDeny refuses deny rules no lead of ours would send.
func CheckDeny(rules []string) error {
	if len(rules) > maxDenyRules {
		return fmt.Errorf("deny: %d rules, more than %d", len(rules), maxDenyRules)
	}
	for _, s := range rules {
		if len(s) > maxRuleBytes {
			return fmt.Errorf("deny: a rule over %d bytes", maxRuleBytes)
		}
		if _, err := permission.ParseRule(s); err != nil {
			return fmt.Errorf("deny: %w", err)
		}
	}
	return nil
}
