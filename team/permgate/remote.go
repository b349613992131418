package permgate

import (
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/permission"
)

// Permission asks of teammates run on workers (a team across hosts,
// team/hosts). The ask is made where the teammate runs, with that
// process's policy; who answers is the team's choice, which the lead's
// process puts in each spawn request (SpawnRequest.Asks). The ask and its
// answer travel through the inboxes as on one host: the person answers
// with `agentteam approve` from any host on the store or in the lead's
// chat, which shows the ask (relay.go); the lead's model with
// review_permission. The lead's process, which has no request of its own
// for it, checks the ask in the inboxes (relay.answer). The ask carries
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
