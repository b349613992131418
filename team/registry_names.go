package team

import (
	"context"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/registry"
)

// The registry's document and store live in team/registry; these names
// keep the team's API as it was for its callers (cmd, the views, the
// stores) while they move to that package's own.

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
func NewRegistry(path, teamName string) *Registry { return registry.NewRegistry(path, teamName) }

// NewRegistryOn is the registry kept in doc (registry.NewRegistryOn).
func NewRegistryOn(doc RegistryStore, teamName string) *Registry {
	return registry.NewRegistryOn(doc, teamName)
}

// NewRegistryOnEntries is the registry as an entry per teammate
// (registry.NewRegistryOnEntries).
func NewRegistryOnEntries(e RegistryEntries, teamName string, old RegistryStore) (*Registry, error) {
	return registry.NewRegistryOnEntries(e, teamName, old)
}

// EmptyConfig is the registry of a team nobody has changed yet.
func EmptyConfig(teamName string) func() *Config { return registry.EmptyConfig(teamName) }

// DecodeRegistryEntry reads one stored entry (registry.DecodeRegistryEntry).
func DecodeRegistryEntry(key string, data []byte) any { return registry.DecodeRegistryEntry(key, data) }

// DeriveState is the team's state from its members (registry.DeriveState).
func DeriveState(members []Member) string { return registry.DeriveState(members) }

// SumUsage adds up the agents' usage (registry.SumUsage).
func SumUsage(agents []AgentUsage) TeamUsage { return registry.SumUsage(agents) }

// errNoChange lets an update function of the registry (or the board)
// decline to write.
var errNoChange = statefile.ErrNoChange

// OwnerLock makes one process at a time the runner of a team (registry.OwnerLock).
type OwnerLock = registry.OwnerLock

// AskWatch tells whether an ask still has its caller waiting (registry.AskWatch).
type AskWatch = registry.AskWatch

// FileOwnerLock is the owner lock of the team in teamDir (registry.FileOwnerLock).
func FileOwnerLock(teamDir string) OwnerLock { return registry.FileOwnerLock(teamDir) }

// CheckNotRunning refuses a team another process runs (registry.CheckNotRunning).
func CheckNotRunning(teamDir string) error { return registry.CheckNotRunning(teamDir) }

// Runner names the process that runs the team of teamDir (registry.Runner).
func Runner(teamDir string) string { return registry.Runner(teamDir) }

// WatchAsks looks once at the team in teamDir (registry.WatchAsks).
func WatchAsks(teamDir string) (AskWatch, error) { return registry.WatchAsks(teamDir) }

// WatchAsksOn is WatchAsks for any owner lock (registry.WatchAsksOn).
func WatchAsksOn(ctx context.Context, lock OwnerLock) (AskWatch, error) {
	return registry.WatchAsksOn(ctx, lock)
}
