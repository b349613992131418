package team

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
)

// nobodyAlive is the liveness test for the owner of the team's lock: no
// other process can be running a teammate of this team.
func nobodyAlive(int) bool { return false }

// RepairOrphans marks teammates left queued or working as failed when no
// process runs the team, judged by the owner lock rather than by PIDs: the
// lock is taken for the repair (so no run starts meanwhile) and released.
// While a run holds it, nothing changes. It returns the names repaired.
func RepairOrphans(ctx context.Context, teamDir string, reg *registry.Registry, events *event.EventLog) ([]string, error) {
	release, ok, err := registry.HoldOwner(teamDir)
	if err != nil || !ok {
		return nil, err // !ok: a live process runs the team, its statuses are true
	}
	defer release()
	repaired, err := reg.RepairDead(ctx, nobodyAlive)
	if err != nil {
		return nil, err
	}
	emitRepairs(events, repaired)
	return repaired, nil
}

func emitRepairs(events EventSink, names []string) {
	for _, name := range names {
		events.Emit(event.Event{Agent: name, Payload: event.Repair{Status: registry.StatusFailed,
			Reason: "left queued or working by an agentteam process that is gone"}})
	}
}

// claimingOwner is an owner lock that makes claims as it is acquired and
// keeps the lock only if it still held it once they were stored
// (natsstore.Owner): the runners' claims are then in the order they ran.
type claimingOwner interface {
	AcquireThen(ctx context.Context, then func() error) (release func(), lost <-chan struct{}, err error)
}

// acquireLead takes the owner lock for the lead's process and, where the
// lock and the mailbox can (a team on NATS), claims the lead's sending
// with it: every message the lead then sends carries leadClaim (0: none),
// and the server refuses it once a later runner of the team has claimed
// the lead's sending in turn — even if this process does not know yet
// that it lost the lock. Where the mailbox keeps keys in its claims, the
// claim holds the key that signs the lead's spawn requests (spawnsign.go).
func acquireLead(ctx context.Context, lock registry.OwnerLock, mb Mailbox) (release func(), lost <-chan struct{}, leadClaim uint64, sign *hosts.Signer, err error) {
	co, ok := lock.(claimingOwner)
	claims, can := mb.(senderClaims)
	keys, keyed := mb.(hosts.LeadKeys)
	if !ok || !can {
		if release, lost, err = lock.Acquire(ctx); err != nil || !keyed {
			return release, lost, 0, nil, err
		}
		if sign, err = hosts.ClaimLeadKey(ctx, keys); err != nil {
			release()
			return nil, nil, 0, nil, fmt.Errorf("claim the lead's spawn requests: %w", err)
		}
		return release, lost, 0, sign, nil
	}
	release, lost, err = co.AcquireThen(ctx, func() error {
		var err error
		if !keyed {
			leadClaim, err = claims.ClaimSender(ctx, inbox.LeadName)
			return err
		}
		if sign, err = hosts.ClaimLeadKey(ctx, keys); err == nil {
			leadClaim = sign.Claim()
		}
		return err
	})
	if err != nil {
		return nil, nil, 0, nil, err
	}
	return release, lost, leadClaim, sign, nil
}
