package team

import (
	"context"

	"github.com/agentteam/agentteam/team/registry"
)

// The registry's document and store live in team/registry; these names
// keep the team's API as it was for its callers (cmd, the views, the
// stores) while they move to that package's own.

//go:fix inline
type (
	Status          = registry.Status
	Member          = registry.Member
	Config          = registry.Config
	SandboxState    = registry.SandboxState
	Registry        = registry.Registry
	RegistryStore   = registry.RegistryStore
	RegistryEntries = registry.RegistryEntries
	ModelRef        = registry.ModelRef
	LeadEntry       = registry.LeadEntry
	Usage           = registry.Usage
	AgentUsage      = registry.AgentUsage
	TeamUsage       = registry.TeamUsage
	PlanState       = registry.PlanState
	HandoffState    = registry.HandoffState
	HandoffSide     = registry.HandoffSide
	HandoffStatus   = registry.HandoffStatus
)

//go:fix inline
const (
	StatusQueued   = registry.StatusQueued
	StatusWorking  = registry.StatusWorking
	StatusIdle     = registry.StatusIdle
	StatusShutdown = registry.StatusShutdown
	StatusFailed   = registry.StatusFailed

	StateInitializing = registry.StateInitializing
	StateExecuting    = registry.StateExecuting
	StateCompleted    = registry.StateCompleted
	StatePartial      = registry.StatePartial
	StateFailed       = registry.StateFailed

	PlanDrafting         = registry.PlanDrafting
	PlanAwaitingApproval = registry.PlanAwaitingApproval
	PlanApproved         = registry.PlanApproved
	PlanRejected         = registry.PlanRejected

	HandoffAwaitingAccept   = registry.HandoffAwaitingAccept
	HandoffContextPreparing = registry.HandoffContextPreparing
	HandoffAwaitingAck      = registry.HandoffAwaitingAck
	HandoffAwaitingContext  = registry.HandoffAwaitingContext
	HandoffCompleted        = registry.HandoffCompleted
	HandoffFailed           = registry.HandoffFailed
	HandoffSender           = registry.HandoffSender
	HandoffReceiver         = registry.HandoffReceiver
)

// NewRegistry opens the registry file at path (registry.NewRegistry).
//
//go:fix inline
func NewRegistry(path, teamName string) *registry.Registry {
	return registry.NewRegistry(path, teamName)
}

// NewRegistryOn is the registry kept in doc (registry.NewRegistryOn).
//
//go:fix inline
func NewRegistryOn(doc registry.RegistryStore, teamName string) *registry.Registry {
	return registry.NewRegistryOn(doc, teamName)
}

// NewRegistryOnEntries is the registry as an entry per teammate
// (registry.NewRegistryOnEntries).
//
//go:fix inline
func NewRegistryOnEntries(e registry.RegistryEntries, teamName string, old registry.RegistryStore) (*registry.Registry, error) {
	return registry.NewRegistryOnEntries(e, teamName, old)
}

// EmptyConfig is the registry of a team nobody has changed yet.
//
//go:fix inline
func EmptyConfig(teamName string) func() *registry.Config { return registry.EmptyConfig(teamName) }

// DecodeRegistryEntry reads one stored entry (registry.DecodeRegistryEntry).
//
//go:fix inline
func DecodeRegistryEntry(key string, data []byte) any { return registry.DecodeRegistryEntry(key, data) }

// DeriveState is the team's state from its members (registry.DeriveState).
//
//go:fix inline
func DeriveState(members []registry.Member) string { return registry.DeriveState(members) }

// SumUsage adds up the agents' usage (registry.SumUsage).
//
//go:fix inline
func SumUsage(agents []registry.AgentUsage) registry.TeamUsage { return registry.SumUsage(agents) }

// OwnerLock makes one process at a time the runner of a team (registry.OwnerLock).
//
//go:fix inline
type OwnerLock = registry.OwnerLock

// AskWatch tells whether an ask still has its caller waiting (registry.AskWatch).
//
//go:fix inline
type AskWatch = registry.AskWatch

// FileOwnerLock is the owner lock of the team in teamDir (registry.FileOwnerLock).
//
//go:fix inline
func FileOwnerLock(teamDir string) registry.OwnerLock { return registry.FileOwnerLock(teamDir) }

// CheckNotRunning refuses a team another process runs (registry.CheckNotRunning).
//
//go:fix inline
func CheckNotRunning(teamDir string) error { return registry.CheckNotRunning(teamDir) }

// Runner names the process that runs the team of teamDir (registry.Runner).
//
//go:fix inline
func Runner(teamDir string) string { return registry.Runner(teamDir) }

// WatchAsks looks once at the team in teamDir (registry.WatchAsks).
//
//go:fix inline
func WatchAsks(teamDir string) (registry.AskWatch, error) { return registry.WatchAsks(teamDir) }

// WatchAsksOn is WatchAsks for any owner lock (registry.WatchAsksOn).
//
//go:fix inline
func WatchAsksOn(ctx context.Context, lock registry.OwnerLock) (registry.AskWatch, error) {
	return registry.WatchAsksOn(ctx, lock)
}
