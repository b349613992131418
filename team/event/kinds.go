package event

import "github.com/agentteam/agentteam/team/request"

// RequestKind is the protocol a request belongs to; the request table
// defines it, the protocols name its values.
type RequestKind = request.Kind

// Kinds of protocol request.
const (
	RequestShutdown     RequestKind = "shutdown"
	RequestPlanApproval RequestKind = "plan_approval"
	RequestHandoff      RequestKind = "handoff"
	RequestPermission   RequestKind = "permission"
)

// Outcome is how a protocol request ended (defined with the request table).
type Outcome = request.Outcome

// Outcomes of a request.
const (
	OutcomeApproved          = request.Approved // the one asked said yes, or the runtime did for it
	OutcomeRejected          = request.Rejected
	OutcomeExpired           = request.Expired // no answer in time, and nothing was done for it
	OutcomeCompleted Outcome = "completed"     // a handoff: the task changed owner
	OutcomeFailed    Outcome = "failed"        // it could not go on: not delivered, or a step failed
	OutcomeForced    Outcome = "forced"        // no answer in time: the runtime shut the teammate down
)
