package registry

// Team states, derived from the members.
const (
	StateInitializing = "initializing"
	StateExecuting    = "executing"
	StateCompleted    = "completed"
	StatePartial      = "partial"
	StateFailed       = "failed"
)

// DeriveState is the team's state from its members: initializing until a
// teammate has started working; executing while any is queued or working;
// then completed when none failed, partial when some failed but others
// produced results, failed when no one did.
func DeriveState(members []Member) string {
	if len(members) == 0 {
		return StateInitializing
	}
	var active, failed, worked int
	for _, m := range members {
		switch m.Status {
		case StatusQueued, StatusWorking:
			active++
		case StatusFailed:
			failed++
		}
		if m.Cycles > 0 && m.Status != StatusFailed {
			worked++
		}
	}
	switch {
	case active > 0:
		for _, m := range members {
			if m.Status == StatusWorking || m.Cycles > 0 {
				return StateExecuting
			}
		}
		return StateInitializing
	case failed == 0:
		return StateCompleted
	case worked > 0:
		return StatePartial
	default:
		return StateFailed
	}
}
