package protocol

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// Deps are what the shutdown and plan protocols need of their team.
type Deps struct {
	Requests *Requests
	Events   event.Sink
	Registry Registry
	// Indexes read the inboxes on, for requests asked from another process.
	Indexes *inbox.Indexes
	Roster  Roster
	// Across: the team spans processes (a work queue), so a request may be
	// asked, or a plan reviewed, in another one.
	Across bool
	// Failure is the event payload of a step that err ended.
	Failure func(class event.ErrorClass, prefix string, err error) event.Failure
	// Notify tells whoever waits for the team to settle to look again.
	Notify func()
}

// Registry is the registry as the protocols read and record it.
type Registry interface {
	Read(ctx context.Context) (registry.Config, error)
	Change(ctx context.Context, fn func(*registry.Config) error) error
}

// Roster is the team's teammates as the protocols reach them.
type Roster interface {
	// Mate is teammate name as this process runs it, or the refusal
	// naming why it does not.
	Mate(ctx context.Context, name string) (Mate, error)
	// Expired is the teammate of a request whose deadline passed; nil
	// when the team is stopping or this process does not run it.
	Expired(name string) Mate
	// Remote is the registry entry of a teammate another process runs
	// (or that waits for a worker).
	Remote(ctx context.Context, name string) (registry.Member, bool)
	// CancelQueued shuts down a teammate no worker has taken yet.
	CancelQueued(ctx context.Context, m registry.Member, reason string)
}

// Mate is one teammate this process runs.
type Mate interface {
	Name() string
	Role() string
	Status() registry.Status
	PlanMode() bool
	PlanApproved() bool
	SetPlanApproved(approved bool)
	// RefreshPlan takes a review the lead's process recorded in the
	// registry, for a plan-mode teammate whose plan is not approved.
	RefreshPlan()
	// ApproveStop makes the teammate stop at the end of its turn.
	ApproveStop()
	// Absorb takes its unread messages into its conversation.
	Absorb() error
	// Stop ends its cycle and waits for it.
	Stop()
	// ShutDown records it shut down for why (as its error too when
	// forced), its work ended.
	ShutDown(why string, forced bool)
}
