package team

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/workspace"
)

// SwitchSession makes an archived session the lead's conversation while
// the team runs: the current one is archived (stamped now), the chosen one
// restored as RestoreSession does, and the lead reads it back, so its next
// turn goes on from there. The teammates are left as they are. It refuses,
// with a sentence, while the lead or a teammate of this process works: the
// person waits or interrupts first.
func (t *Team) SwitchSession(ctx context.Context, id string, now time.Time) error {
	id = strings.TrimSpace(id)
	if id == sessions.CurrentID {
		return errors.New("that is the conversation open now")
	}
	if _, err := sessions.Path(t.ws, id); err != nil {
		return err
	}
	if busy := working(t.roster); len(busy) > 0 {
		return fmt.Errorf("%s working: wait until the team is idle (or /shutdown), then switch", strings.Join(busy, ", ")+isOrAre(len(busy)))
	}
	err := t.lead.Reload(ctx, func() error { return sessions.Restore(t.ws, id, now) })
	if errors.Is(err, loop.ErrCycleRunning) {
		return errors.New("the lead is working: wait for its answer or interrupt it (esc), then switch")
	}
	return err
}

func isOrAre(n int) string {
	if n == 1 {
		return " is"
	}
	return " are"
}

// working names the teammates r runs that are in a cycle or queued for one.
func working(r *roster) []string {
	var out []string
	r.each(func(m *member) {
		if m.cycleCancel != nil || m.status == registry.StatusQueued {
			out = append(out, m.name)
		}
	})
	sort.Strings(out)
	return out
}

// SessionStore keeps the teammates' conversations when they are not files
// of the workspace: a log per teammate (loop.SessionLog), and the archive
// of an earlier conversation when a teammate is spawned afresh under a
// name used before, which must stay readable.
type SessionStore interface {
	SessionLog(name string) loop.SessionLog
	Archive(ctx context.Context, name string, now time.Time) error
}

// mateSessions are the teammates' conversations: files of the workspace,
// or the store Options.Sessions gives.
type mateSessions struct {
	ws    *workspace.Workspace
	store SessionStore // nil: the files
}

// path is name's session file; "" when a store keeps the conversation.
func (s mateSessions) path(name string) string {
	if s.store != nil {
		return ""
	}
	return s.ws.SessionPath(name)
}

// log is name's conversation in the store; nil for the file.
func (s mateSessions) log(name string) loop.SessionLog {
	if s.store == nil {
		return nil
	}
	return s.store.SessionLog(name)
}

// archive sets name's earlier conversation aside before it is spawned
// afresh. A file that cannot be moved is left; a store that cannot
// archive fails the spawn, which would otherwise continue the earlier
// conversation.
func (s mateSessions) archive(ctx context.Context, name string, now time.Time) error {
	if s.store == nil {
		sessions.ArchiveFile(s.ws.SessionPath(name), now)
		return nil
	}
	if err := s.store.Archive(ctx, name, now); err != nil {
		return fmt.Errorf("start %s afresh: %w", name, err)
	}
	return nil
}
