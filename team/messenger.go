package team

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/pingpong"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// Messenger delivers the agents' messages: it is the tools' Messenger and
// TeamManager, the person's way to write to the team, and every message
// of the team goes through it.
type Messenger struct {
	roster  *roster        // who is run here, and the lead's spawns
	reg     registryReader // who may be written to
	store   Mailbox
	faults  *fault.Latch // told of a full disk
	events  EventSink
	changed signal // rung at every delivery
	loops   pingpong.Detector
}

// Messenger is how the team's messages are sent, for the person too.
func (t *Team) Messenger() *Messenger { return t.messenger }

// SpawnTeammate is the lead's spawn_teammate (tools.TeamManager).
func (ms *Messenger) SpawnTeammate(ctx context.Context, spec tools.SpawnSpec) error {
	return ms.roster.spawn(ctx, inbox.LeadName, spec)
}

// Send delivers a message to one agent (tools.Messenger). The recipient
// must be the lead or a teammate the registry knows, whatever its status.
func (ms *Messenger) Send(ctx context.Context, from, to, content string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !ms.roster.runs(to) { // a teammate of this process needs no registry read
		if err := CheckRecipient(ctx, ms.reg, to); err != nil {
			return err
		}
	}
	if from == to {
		return fmt.Errorf("%s cannot send a message to itself", from)
	}
	m := inbox.Message{Type: inbox.TypeMessage, From: from, To: to, Content: content}
	if call := tools.CallID(ctx); call != "" {
		m.ID = sentMessageID(from, call, to)
	}
	if _, err := ms.deliverMessage(ctx, m); err != nil {
		return err
	}
	if ms.loops.Observe(from, to, content) {
		ms.tellPingPong(ctx, from, to, content)
	}
	return nil
}

// Broadcast sends a broadcast message to every registered teammate but the
// sender (tools.Messenger).
func (ms *Messenger) Broadcast(ctx context.Context, from, content string) ([]string, error) {
	c, err := ms.reg.Read(ctx)
	if err != nil {
		return nil, err
	}
	var reached []string
	for _, m := range c.Teammates {
		if m.Name == from {
			continue
		}
		if err := ctx.Err(); err != nil {
			return reached, fmt.Errorf("broadcast stopped before %s: %w", m.Name, err)
		}
		if _, err := ms.deliver(ctx, from, m.Name, inbox.TypeBroadcast, content); err != nil {
			return reached, fmt.Errorf("broadcast to %s: %w", m.Name, err)
		}
		reached = append(reached, m.Name)
	}
	if len(reached) == 0 {
		return nil, fmt.Errorf("there are no teammates to broadcast to: spawn one first")
	}
	return reached, nil
}

// runs reports whether this process runs a teammate of that name.
func (r *roster) runs(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.members[name]
	return ok
}

// CheckRecipient refuses invalid names and names the registry does not know.
func CheckRecipient(ctx context.Context, reg registryReader, to string) error {
	if err := inbox.ValidateName(to); err != nil {
		return err
	}
	if to == inbox.LeadName {
		return nil
	}
	if to == inbox.UserName {
		return fmt.Errorf("the person is not an inbox: put what they should read in your final reply")
	}
	c, err := reg.Read(ctx)
	if err != nil {
		return err
	}
	if c.Find(to) < 0 {
		names := make([]string, 0, len(c.Teammates))
		for _, m := range c.Teammates {
			names = append(names, m.Name)
		}
		known := "none yet"
		if len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		return fmt.Errorf("no agent named %s: the lead is \"lead\", teammates are: %s", to, known)
	}
	return nil
}

// deliver appends to an inbox and logs the message event.
func (ms *Messenger) deliver(ctx context.Context, from, to string, typ inbox.MessageType, content string) (inbox.Message, error) {
	return ms.deliverMessage(ctx, inbox.Message{Type: typ, From: from, To: to, Content: content})
}

// deliverMessage appends m to m.To's inbox and logs the message event.
func (ms *Messenger) deliverMessage(ctx context.Context, m inbox.Message) (inbox.Message, error) {
	m, err := ms.store.Append(ctx, m.To, m)
	if err != nil {
		ms.faults.CheckStorage(err)
		return m, err
	}
	ms.events.Emit(event.Event{Payload: event.Delivered(m)})
	ms.changed.notify()
	return m, nil
}

// Describe renders the registry for the model (tools.TeamManager).
func (ms *Messenger) Describe(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	c, err := ms.reg.Read(ctx)
	if err != nil {
		return "", err
	}
	return DescribeTeam(ctx, c, ms.store.Stats), nil
}

// DescribeTeam is the registry c as list_teammates and /team show it: a
// row per teammate, its unread count from stats ("?" when it cannot be read).
func DescribeTeam(ctx context.Context, c registry.Config, stats func(ctx context.Context, name string) (inbox.Stats, error)) string {
	if len(c.Teammates) == 0 {
		return "no teammates yet"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tTURNS\tUNREAD\tUPDATED\tMODEL")
	for _, m := range c.Teammates {
		unread := "?"
		if st, err := stats(ctx, m.Name); err == nil {
			unread = fmt.Sprint(st.Unread)
		}
		status := string(m.Status)
		if m.Error != "" {
			status += " (" + m.Error + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Name, m.Role, status, m.Turns, unread,
			m.UpdatedAt.Local().Format(time.TimeOnly), orDash(m.Model))
	}
	tw.Flush()
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fitMessage cuts a report longer than a message may be, saying where the
// whole of it is, so a long reply reaches the lead instead of failing.
func fitMessage(content, wholeIn string) string {
	if len(content) <= inbox.MaxContentBytes {
		return content
	}
	note := fmt.Sprintf("\n\n[cut: the reply was %d bytes, over a message's %d; the whole of it is the last reply in %s]", len(content), inbox.MaxContentBytes, wholeIn)
	return event.Clip(content, inbox.MaxContentBytes-len(note)-len("…")) + note
}

// EndedNote says, of a message to a teammate that has shut down or failed,
// that nobody reads it now ("" for any other recipient): "sent" alone
// would say otherwise.
func EndedNote(c registry.Config, to string) string {
	i := c.Find(to)
	if i < 0 {
		return ""
	}
	word := "shut down"
	switch c.Teammates[i].Status {
	case registry.StatusFailed:
		word = "failed"
	case registry.StatusShutdown:
	default:
		return ""
	}
	return fmt.Sprintf("%s has %s: the message waits in its inbox and is read only if %s is spawned again", to, word, to)
}
