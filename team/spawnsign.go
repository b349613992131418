package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
)

// Verify checks that q was signed by the team's current lead
// (hosts.VerifyLead); nil when this team's store keeps no keys to check
// it by.
func (h *hosting) Verify(ctx context.Context, q hosts.Request) error {
	keys, ok := h.t.opts.Mailbox.(hosts.LeadKeys)
	if !ok {
		return nil
	}
	return hosts.VerifyLead(ctx, keys, q)
}

// Refuse fails, for want of the lead's signature, the registry entry that
// waits for request q (if one does) and says why.
func (h *hosting) Refuse(q hosts.Request, why error) {
	t := h.t
	err := fmt.Errorf("worker %s refused the spawn of %s: %w", h.opts.ID, q.Name, why)
	t.events.Emit(event.Event{Agent: q.Name, Payload: failure(event.ClassInternal, "", err)})
	var failed bool
	ctx := context.Background() // hosts calls Refuse without a context
	cerr := t.reg.ChangeTeammate(ctx, q.Name, func(m *registry.Member) error {
		failed = false
		if m.SpawnID != q.ID || m.Status != registry.StatusQueued || m.Worker != "" {
			return statefile.ErrNoChange
		}
		m.Status, m.Error, m.UpdatedAt = registry.StatusFailed, err.Error(), time.Now().UTC()
		failed = true
		return nil
	})
	if cerr != nil && !errors.As(cerr, new(registry.NoTeammateError)) {
		t.events.Emit(event.Event{Agent: q.Name, Payload: failure(event.ClassRegistry, "mark the refused spawn failed: ", cerr)})
	}
	if failed {
		t.events.Emit(event.Event{Agent: q.Name, Payload: event.StatusChanged{Role: q.Role, Status: registry.StatusFailed, Reason: err.Error(), PID: t.pid}})
	}
}

// publish signs req as the lead's and puts it on the work queue.
func (h *hosting) publish(ctx context.Context, req hosts.Request) error {
	data, err := json.Marshal(h.t.leadSign.Sign(req))
	if err != nil {
		return err
	}
	return h.queue.Publish(ctx, req.ID, data)
}
