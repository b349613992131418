package team

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/pingpong"
)

// tellPingPong tells the lead that from and to bounce messages.
func (ms *Messenger) tellPingPong(ctx context.Context, from, to, content string) {
	text := fmt.Sprintf("agentteam noticed that %s and %s have sent each other near-identical messages %d times in a row (the last: %q): they may be stuck in a loop that spends model calls; tell them to stop, give one a new task, or shut one down",
		from, to, pingpong.Run, event.Clip(content, 120))
	if _, err := ms.deliver(ctx, from, inbox.LeadName, inbox.TypeError, text); err != nil {
		ms.events.Emit(event.Event{Agent: from, Payload: failure(event.ClassInbox, "telling the lead of a message loop: ", err)})
	}
}
