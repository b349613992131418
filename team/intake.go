package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/protocol"
)

// agentInbox is an agent's inbox as its loop reads it. The answer to a
// permission ask is left out: the asking call's tool result says it. For
// the lead (plans not nil), the request of a plan the person has answered
// comes as a message saying so: nothing waits for its review.
type agentInbox struct {
	loop.Inbox
	plans *protocol.Plans
}

func (ai agentInbox) ReadUnread(ctx context.Context, name string) (inbox.Batch, error) {
	b, err := ai.Inbox.ReadUnread(ctx, name)
	kept := b.Messages[:0:0]
	for _, m := range b.Messages {
		if m.Type == permgate.TypeResponse {
			continue
		}
		kept = append(kept, ai.planAnswered(m))
	}
	if len(kept) == 0 && len(b.Messages) > 0 && len(b.Bad) == 0 {
		// Nothing left for the loop, which commits no empty batch: the
		// answers are read here, or they would wake the agent for ever.
		if cerr := ai.Inbox.Commit(ctx, name, b); cerr != nil && !errors.Is(cerr, inbox.ErrHeld) {
			return inbox.Batch{}, cerr
		}
	}
	b.Messages = kept
	return b, err
}

// planAnswered is m, or the note that stands for a plan request the
// person has answered.
func (ai agentInbox) planAnswered(m inbox.Message) inbox.Message {
	if ai.plans == nil || m.Type != protocol.TypePlanApprovalRequest {
		return m
	}
	approved, ok := ai.plans.ByPerson(m.CorrelationID)
	if !ok {
		return m
	}
	word := "rejected"
	if approved {
		word = "approved"
	}
	m.Type = inbox.TypeMessage
	m.Content = fmt.Sprintf("The person has already %s %s's plan (request %s): there is nothing for you to review.", word, m.From, m.CorrelationID)
	return m
}
