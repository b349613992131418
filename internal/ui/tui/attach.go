package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/atpath"
)

// attachedMsg is a message to the lead with its attachments read: the
// text the lead gets and the lines that say what was (not) attached.
type attachedMsg struct {
	user *entry // the person's message the lines go under
	atpath.Report
}

// sayToLead gives the lead text with its attachments, read in this job,
// and answers with what was attached for the conversation.
func (cm *commander) sayToLead(user *entry, text string) {
	m := cm.m
	root, tokens := m.in.paths.Root, m.in.attach
	m.do(func() tea.Msg {
		full, am := atpath.Attach(root, text, tokens, atpath.MaxTotal)
		if err := m.eng.Say(full); err != nil {
			return noteMsg{text: "the lead did not get your message: " + err.Error(), isErr: true, toLead: true}
		}
		if len(am.Attached) == 0 && len(am.Refused) == 0 {
			return nil
		}
		return attachedMsg{user: user, Report: am}
	})
}

// sendToMate puts text, with its attachments read in this job, in a
// teammate's inbox; a note says what was attached.
func (cm *commander) sendToMate(to, text, sent string) {
	m := cm.m
	root, tokens := m.in.paths.Root, m.in.attach
	// An inbox message is bounded: the files get what the text and their frames leave.
	budget := min(atpath.MaxTotal, inbox.MaxContentBytes-len(text)-atpath.MaxFiles*512)
	m.do(func() tea.Msg {
		full, am := atpath.Attach(root, text, tokens, budget)
		if err := m.eng.Send(m.ctx, to, full); err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		if len(am.Attached)+len(am.Refused) == 0 {
			return hintMsg(sent)
		}
		return noteMsg{text: strings.Join(append(append([]string{sent}, am.Attached...), am.Refused...), "\n")}
	})
}

// attached puts the lines under the person's message.
func (p *convPane) attached(am attachedMsg) {
	var add []*entry
	if len(am.Attached) > 0 {
		add = append(add, &entry{kind: entryNote, text: strings.Join(am.Attached, "\n")})
	}
	if len(am.Refused) > 0 {
		add = append(add, &entry{kind: entryError, text: strings.Join(am.Refused, "\n")})
	}
	at := len(p.entries)
	for i, e := range p.entries {
		if e == am.user {
			at = i + 1
			break
		}
	}
	if !p.follow && at <= p.top {
		p.top += len(add) // what the person reads stays in place
	}
	p.entries = slices.Insert(p.entries, at, add...)
}
