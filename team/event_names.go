package team

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
)

// The events, their payloads, JSON and sentences live in team/event;
// these names keep the team's API as it was for its callers while they
// move to that package's own.

//go:fix inline
type (
	Activity         = event.Activity
	Answer           = event.Answer
	BadLine          = event.BadLine
	Compacted        = event.Compacted
	ErrorClass       = event.ErrorClass
	Event            = event.Event
	EventFollower    = event.EventFollower
	EventKind        = event.EventKind
	EventLines       = event.EventLines
	EventLog         = event.EventLog
	Failure          = event.Failure
	HandoffChanged   = event.HandoffChanged
	HookRun          = event.HookRun
	Instructions     = event.Instructions
	Intake           = event.Intake
	MessageDelivered = event.MessageDelivered
	Outcome          = event.Outcome
	Payload          = event.Payload
	Permission       = event.Permission
	Prompt           = event.Prompt
	Repair           = event.Repair
	Reply            = event.Reply
	RequestAnswered  = event.RequestAnswered
	RequestExpired   = event.RequestExpired
	RequestKind      = event.RequestKind
	RequestOpened    = event.RequestOpened
	RequestRef       = event.RequestRef
	Retry            = event.Retry
	Settled          = event.Settled
	Spawn            = event.Spawn
	StatusChanged    = event.StatusChanged
	TaskChange       = event.TaskChange
	TaskChanged      = event.TaskChanged
	ToolCall         = event.ToolCall
	Unknown          = event.Unknown
	WorktreeAction   = event.WorktreeAction
	WorktreeChanged  = event.WorktreeChanged
)

//go:fix inline
const (
	ByRuntime             = event.ByRuntime
	ClassBoard            = event.ClassBoard
	ClassBudget           = event.ClassBudget
	ClassBudgetAsk        = event.ClassBudgetAsk
	ClassInbox            = event.ClassInbox
	ClassInternal         = event.ClassInternal
	ClassModel            = event.ClassModel
	ClassRegistry         = event.ClassRegistry
	ClassSession          = event.ClassSession
	ClassStorage          = event.ClassStorage
	EventActivity         = event.EventActivity
	EventAnswer           = event.EventAnswer
	EventBadLine          = event.EventBadLine
	EventCompacted        = event.EventCompacted
	EventError            = event.EventError
	EventHandoff          = event.EventHandoff
	EventHook             = event.EventHook
	EventInstructions     = event.EventInstructions
	EventIntake           = event.EventIntake
	EventMessage          = event.EventMessage
	EventPermission       = event.EventPermission
	EventPrompt           = event.EventPrompt
	EventRepair           = event.EventRepair
	EventReply            = event.EventReply
	EventRequestAnswered  = event.EventRequestAnswered
	EventRequestExpired   = event.EventRequestExpired
	EventRequestOpened    = event.EventRequestOpened
	EventRetry            = event.EventRetry
	EventSettled          = event.EventSettled
	EventSpawn            = event.EventSpawn
	EventStatus           = event.EventStatus
	EventTask             = event.EventTask
	EventToolCall         = event.EventToolCall
	EventWorktree         = event.EventWorktree
	OutcomeApproved       = event.OutcomeApproved
	OutcomeCompleted      = event.OutcomeCompleted
	OutcomeExpired        = event.OutcomeExpired
	OutcomeFailed         = event.OutcomeFailed
	OutcomeForced         = event.OutcomeForced
	OutcomeRejected       = event.OutcomeRejected
	RequestHandoff        = event.RequestHandoff
	RequestPermission     = event.RequestPermission
	RequestPlanApproval   = event.RequestPlanApproval
	RequestShutdown       = event.RequestShutdown
	TaskChangeAutoClaimed = event.TaskChangeAutoClaimed
	TaskChangeBlockers    = event.TaskChangeBlockers
	TaskChangeClaimed     = event.TaskChangeClaimed
	TaskChangeCompleted   = event.TaskChangeCompleted
	TaskChangeCreated     = event.TaskChangeCreated
	TaskChangeHandedOver  = event.TaskChangeHandedOver
	TaskChangeReleased    = event.TaskChangeReleased
	WorktreeCommitted     = event.WorktreeCommitted
	WorktreeConflicted    = event.WorktreeConflicted
	WorktreeCreated       = event.WorktreeCreated
	WorktreeKept          = event.WorktreeKept
	WorktreeMerged        = event.WorktreeMerged
	WorktreeRemoved       = event.WorktreeRemoved
)

// FirstLine is s's first line, cut to n runes (event.FirstLine).
//
//go:fix inline
func FirstLine(s string, n int) string { return event.FirstLine(s, n) }

// Delivered is the event payload of a message once it is in its inbox.
//
//go:fix inline
func Delivered(m inbox.Message) event.MessageDelivered { return event.Delivered(m) }

// RetryEvent is the event of a model call being tried again.
//
//go:fix inline
func RetryEvent(r llm.Retry) event.Event { return event.RetryEvent(r) }

// NewEventLog writes to path (event.NewEventLog).
//
//go:fix inline
func NewEventLog(path string, sub func(event.Event)) *event.EventLog {
	return event.NewEventLog(path, sub)
}

// NewEventLogTo writes to lines (event.NewEventLogTo).
//
//go:fix inline
func NewEventLogTo(lines event.EventLines, sub func(event.Event)) *event.EventLog {
	return event.NewEventLogTo(lines, sub)
}

// FollowEventFile follows an event file (event.FollowEventFile).
//
//go:fix inline
func FollowEventFile(path string, backlog int64) *event.EventFollower {
	return event.FollowEventFile(path, backlog)
}

// FollowEventLines follows a store's event lines (event.FollowEventLines).
//
//go:fix inline
func FollowEventLines(read func(ctx context.Context) ([][]byte, error)) *event.EventFollower {
	return event.FollowEventLines(read)
}
