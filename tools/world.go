package tools

import (
	"context"
	"encoding/json"
)

// What the tools need from the rest of the program, declared here so that
// team can implement it without tools importing team.

// Messenger delivers messages between agents' inboxes.
type Messenger interface {
	// Send appends a message of type "message" to one inbox. An unknown or
	// invalid recipient is an error (never a silent loss).
	Send(ctx context.Context, from, to, content string) error
	// Broadcast sends a "broadcast" message to every teammate except from,
	// and returns who it reached.
	Broadcast(ctx context.Context, from, content string) ([]string, error)
}

// InboxReader returns the caller's unread messages as text. commit marks
// them read; the loop calls it only after the text is in the conversation.
type InboxReader interface {
	ReadInbox(ctx context.Context) (text string, commit func() error, err error)
}

// SpawnSpec is a teammate as spawn_teammate describes it.
type SpawnSpec struct {
	Name, Role, Prompt string
	// PlanMode: the teammate may only read until the lead approves its plan.
	PlanMode bool
	// Isolation is "worktree" (its own git worktree and branch), "none"
	// (the shared workspace) or "" for the team's default.
	Isolation string
	// Model and Provider choose the teammate's model among those configured;
	// "" leaves it to the role's model, else the default. Model may be
	// written "provider/model".
	Model, Provider string
	// Labels, on a team with workers on several hosts, are what a worker
	// must have to run it (each checked by CheckLabel); nil: any worker.
	Labels []string
}

// TeamManager is what the lead's team tools need.
type TeamManager interface {
	// SpawnTeammate registers and starts a teammate. A refusal (bad name,
	// name taken, queue full) is an error whose text the model reads.
	SpawnTeammate(ctx context.Context, spec SpawnSpec) error
	// Describe renders the registry as text for the model.
	Describe(ctx context.Context) (string, error)
}

// Merger merges a teammate's branch into the lead's branch (the lead's
// merge_teammate). A conflict, or a refusal, is an error the model reads.
type Merger interface {
	MergeTeammate(ctx context.Context, name string) (string, error)
}

// TaskSpec is a new task as the task_create tool gives it.
type TaskSpec struct {
	Subject, Description, Role string
	BlockedBy                  []string
}

// TaskBoard is the shared task board. Each method acts for the
// named agent; a refusal (unknown id, owned by someone else, blocked) is an
// error whose text the model reads. Results are text for the model.
type TaskBoard interface {
	// CreateTask adds a pending task and describes it (its id first).
	CreateTask(ctx context.Context, by string, spec TaskSpec) (string, error)
	// ListTasks renders the board as a table.
	ListTasks(ctx context.Context) (string, error)
	// ClaimTask makes agent the owner of a claimable task (compare-and-set).
	ClaimTask(ctx context.Context, agent, id string) (string, error)
	// UpdateTask sets a task's status (pending releases it, completed
	// finishes it) with a note; blockedBy, when not nil, replaces what it waits for.
	UpdateTask(ctx context.Context, agent, id, status, note string, blockedBy []string) (string, error)
}

// Protocols are the team protocols that run over inbox messages
// linked by a request id. Each method acts for the named agent, enforces
// the protocol's rules and returns text for the model; a refusal is an error.
type Protocols interface {
	// RequestShutdown asks a teammate to shut down (lead).
	RequestShutdown(ctx context.Context, from, name, reason string) (string, error)
	// RespondShutdown answers a shutdown request (the teammate asked).
	RespondShutdown(ctx context.Context, from, requestID string, approve bool, reason string) (string, error)
	// SubmitPlan sends a plan-mode teammate's plan to the lead for approval.
	SubmitPlan(ctx context.Context, from, plan string) (string, error)
	// ReviewPlan approves or rejects a submitted plan (lead).
	ReviewPlan(ctx context.Context, from, requestID string, approve bool, feedback string) (string, error)
	// Handoff hands a task, with the sender's context, to another agent (any agent).
	Handoff(ctx context.Context, from string, spec HandoffSpec) (string, error)
}

// HandoffSpec is a handoff as the handoff tool gives it.
type HandoffSpec struct {
	// To receives the task; Task is a board id (t3) or a short description.
	To, Task string
	// Reason says why; Context is the sender's summary for the receiver.
	Reason, Context string
}

// PermissionGate decides, before any tool call runs, whether it may; it
// may block while someone is asked. why is the refusal the model reads.
type PermissionGate interface {
	Permit(ctx context.Context, tool string, args json.RawMessage) (ok bool, why string)
}

// ToolHooks run the person's hooks around each of an agent's tool calls
// (PreToolUse, PostToolUse). BeforeTool runs before the permission gate;
// why is the hook's reason the model reads. AfterTool sees the result and
// may give a note the model reads with it.
type ToolHooks interface {
	BeforeTool(ctx context.Context, tool string, args json.RawMessage) (ok bool, why string)
	AfterTool(ctx context.Context, tool string, args json.RawMessage, res Result) (note string)
}

// WriteGate says whether the calling agent may change anything now; a
// teammate in plan mode may not until its plan is approved.
type WriteGate interface {
	WriteAllowed() (ok bool, why string)
}

// writeRefusal says why the agent may not change anything now, or "" when
// it may (a nil gate is always open).
func writeRefusal(g WriteGate) string {
	if g == nil {
		return ""
	}
	if ok, why := g.WriteAllowed(); !ok {
		return why
	}
	return ""
}
