package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentteam/agentteam/team/sessions"
)

// SessionLister is the part of an engine that lists the lead's sessions;
// an engine without it has none to show.
type SessionLister interface {
	Sessions() ([]sessions.Info, error)
}

func (e *teamEngine) Sessions() ([]sessions.Info, error) {
	return sessions.List(e.t.Workspace())
}

// SessionSwitcher is the part of an engine that switches the lead to
// another of its conversations.
type SessionSwitcher interface {
	SwitchSession(ctx context.Context, id string) error
}

func (e *teamEngine) SwitchSession(ctx context.Context, id string) error {
	return e.t.SwitchSession(ctx, id, time.Now())
}

// FormatSessions is the /sessions note: one line per conversation.
func FormatSessions(list []sessions.Info) string {
	if len(list) == 0 {
		return "no conversations with the lead yet"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-19s  %-16s  %4s  %s\n", "ID", "TIME", "MSGS", "TITLE")
	for _, s := range list {
		fmt.Fprintf(&b, "%-19s  %-16s  %4d  %s\n", s.ID, s.Time.Local().Format("2006-01-02 15:04"), s.Messages, s.Title)
	}
	b.WriteString("/sessions ID switches the lead to one (agentteam sessions show ID reads it).")
	return b.String()
}
