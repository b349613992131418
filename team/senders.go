package team

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/registry"
)

// senderClaims is a mailbox whose messages can be fenced by their sender
// (natsstore.Mailbox): a worker's teammate claims its sending, and each
// of its messages is stored only while that claim is its sender's last.
type senderClaims interface {
	ClaimSender(ctx context.Context, agent string) (uint64, error)
	AppendAs(ctx context.Context, name string, m inbox.Message, claim uint64) (inbox.Message, error)
}

// claimedMailbox is the team's mailbox on a team across hosts: a message
// from a teammate this process runs for a claim carries that claim, so
// that once its respawn elsewhere claims it, nothing this process still
// says for it (a send_message, a report, a protocol's answer) is
// delivered — refused here once this process knows, by the server before.
// The lead's messages carry the claim its process took with the owner
// lock (acquireLead), so a lead whose lock passed to another process says
// nothing more either. Messages from the person (user) are never fenced:
// any terminal may send them.
type claimedMailbox struct {
	Mailbox
	claims senderClaims
	r      *roster
	lead   uint64 // the lead's claim (0: none)
}

// withSenderClaims wraps mb when it can fence senders; else it is mb.
func withSenderClaims(mb Mailbox, r *roster, lead uint64) Mailbox {
	claims, ok := mb.(senderClaims)
	if !ok {
		return mb
	}
	return &claimedMailbox{Mailbox: mb, claims: claims, r: r, lead: lead}
}

// Append stores m in name's inbox, with its sender's claim when this
// process runs the sender for one.
func (cm *claimedMailbox) Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error) {
	if m.From == inbox.LeadName && cm.lead != 0 {
		return cm.appendLead(ctx, name, m)
	}
	if m.From != inbox.UserName && cm.lead != 0 {
		// The lead's process no longer runs the team: nor do its teammates.
		if err := cm.r.t.faults.Fence(); err != nil {
			return inbox.Message{}, fmt.Errorf("message from %s to %s: %w", m.From, name, err)
		}
	}
	cm.r.mu.Lock()
	s := cm.r.members[m.From]
	cm.r.mu.Unlock()
	if s == nil || s.sendClaim == 0 || s.ended() {
		return cm.Mailbox.Append(ctx, name, m)
	}
	if s.fenced.Load() {
		return inbox.Message{}, fmt.Errorf("message from %s to %s: %w", m.From, name, registry.ErrTakenOver)
	}
	out, err := cm.claims.AppendAs(ctx, name, m, s.sendClaim)
	if err != nil && fencedError(err) {
		cm.r.fenceOff(s, err)
	}
	return out, err
}

// appendLead stores a message of the lead with its claim: refused here
// once this process knows it lost the owner lock, by the server once
// another process claimed the lead's sending since; either stops the team.
func (cm *claimedMailbox) appendLead(ctx context.Context, name string, m inbox.Message) (inbox.Message, error) {
	if err := cm.r.t.faults.Fence(); err != nil {
		cm.r.t.faults.Halt(err)
		return inbox.Message{}, fmt.Errorf("message from %s to %s: %w", m.From, name, err)
	}
	out, err := cm.claims.AppendAs(ctx, name, m, cm.lead)
	if err != nil && fencedError(err) {
		cm.r.t.faults.Halt(fault.ErrOwnerLost)
		return inbox.Message{}, fmt.Errorf("message from %s to %s: %w", m.From, name, fault.ErrOwnerLost)
	}
	return out, err
}

// claimSending makes m's messages from now on carry a claim of its
// sending, which refuses every earlier one's (its run on a worker cut off).
func (r *roster) claimSending(ctx context.Context, m *member) error {
	cm, ok := r.t.store.(*claimedMailbox)
	if !ok {
		return nil
	}
	seq, err := cm.claims.ClaimSender(ctx, m.name)
	if err != nil {
		return err
	}
	m.sendClaim = seq
	return nil
}

// ended reports whether m's life in this process is over.
func (m *member) ended() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}
