package natsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// Senders' claims. A teammate that a worker runs is the one writer of what
// it sends: ClaimSender stores a marker on agentteam.TEAM.sender.NAME, in
// the inbox stream itself, and each message it then sends (AppendAs)
// expects that subject's last message to be its claim. The server checks
// it as it stores the message, so once a respawn elsewhere claims the
// sender, every message of the earlier writer — even one held up in the
// network and delivered late — is refused (a *FencedError), never
// delivered beside the respawn's.

// senderSubject holds agent's sender claims in team's inbox stream.
func senderSubject(team, agent string) string { return "agentteam." + team + ".sender." + agent }

// inProcessPause is the wait before a message is sent again that a
// cluster refused because another message of the same sender was still
// being stored.
const inProcessPause = 5 * time.Millisecond

// ClaimSender makes the caller the one sender of agent's messages and
// returns its claim, for AppendAs: every earlier claim's messages are
// refused from now on.
func (mb *Mailbox) ClaimSender(ctx context.Context, agent string) (uint64, error) {
	return mb.ClaimSenderKey(ctx, agent, nil)
}

// ClaimSenderKey is ClaimSender whose claim also holds key, a public key
// of the claimant's: whoever reads the claim (SenderClaim) can check what
// the claimant signed with it.
func (mb *Mailbox) ClaimSenderKey(ctx context.Context, agent string, key []byte) (uint64, error) {
	if err := inbox.ValidateName(agent); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	id, err := newID()
	if err != nil {
		return 0, err
	}
	subj := senderSubject(mb.team, agent)
	seq, err := publishHedged(ctx, mb.js, func() *nats.Msg {
		m := nats.NewMsg(subj)
		m.Header.Set(claimHeader, "1")
		m.Data = key
		return m
	}, id, attemptTimeout, nil)
	if err != nil {
		return 0, fmt.Errorf("claim the messages of %s: %w", agent, err)
	}
	return seq, nil
}

// AppendAs is Append for a message from m.From that holds claim (its
// ClaimSender): the server stores it only while the claim is m.From's
// last, and refuses it with a *FencedError once another writer claimed
// m.From since.
func (mb *Mailbox) AppendAs(ctx context.Context, name string, m inbox.Message, claim uint64) (inbox.Message, error) {
	m, line, err := mb.encodeAppend(name, m)
	if err != nil {
		return inbox.Message{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	subj, from := SentSubject(mb.team, name, m.From), senderSubject(mb.team, m.From)
	ctx, stop := natsconn.WatchRefusal(ctx, mb.nc, subj)
	defer stop()
	msg := func() *nats.Msg { return &nats.Msg{Subject: subj, Data: line} }
	for {
		// A try refused for the claim is refused: this sender's messages
		// do not move it, so none of them can be what refused it.
		_, err := publishHedged(ctx, mb.js, msg, m.ID, attemptTimeout, nil, jetstream.WithExpectLastSequenceForSubject(claim, from))
		var api *jetstream.APIError
		switch {
		case err == nil:
			return m, nil
		case errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant && ctx.Err() == nil:
			// A cluster checks one message of a sender at a time: another
			// of its messages (or a claim) was being stored. Look again.
			select {
			case <-ctx.Done():
			case <-time.After(inProcessPause):
			}
		case errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence:
			return inbox.Message{}, fmt.Errorf("message to %s: %w", name, &FencedError{Agent: m.From})
		default:
			return inbox.Message{}, fmt.Errorf("message to %s: %w", name, sendRefused(ctx, m.From, err))
		}
	}
}

// SenderClaim is agent's current sender claim and the key it holds
// (ClaimSenderKey); 0 and no key while nobody claimed agent.
func (mb *Mailbox) SenderClaim(ctx context.Context, agent string) (claim uint64, key []byte, err error) {
	if err := inbox.ValidateName(agent); err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	raw, err := mb.stream.GetLastMsgForSubject(ctx, senderSubject(mb.team, agent))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0, nil, nil
	case err != nil:
		return 0, nil, fmt.Errorf("the sender claim of %s: %w", agent, err)
	}
	return raw.Sequence, raw.Data, nil
}
