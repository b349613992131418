package event

import (
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/registry"
)

// The payloads of events, one type per kind. Their json tags are the
// fields of an events.jsonl line next to "time", "kind" and "agent"; a
// field that existed when the event was one flat struct keeps its name
// ("detail" for the main text).

// Spawn: a teammate was registered and waits for a worker.
type Spawn struct {
	Role   string          `json:"role,omitempty"`
	Status registry.Status `json:"status,omitempty"`
	From   string          `json:"from,omitempty"`  // who spawned it: the lead, or the person
	PID    int             `json:"pid,omitempty"`   // the process that runs it
	Model  string          `json:"model,omitempty"` // the label of the model it talks to
}

// StatusChanged: a teammate's status changed, or its plan's state did
// (then Status is the unchanged status and PlanState is set).
type StatusChanged struct {
	Role      string             `json:"role,omitempty"`
	Status    registry.Status    `json:"status"`
	PlanState registry.PlanState `json:"plan_state,omitempty"`
	Reason    string             `json:"detail,omitempty"`
	PID       int                `json:"pid,omitempty"`
}

// MessageDelivered: a message was appended to an inbox.
type MessageDelivered struct {
	From          string            `json:"from"`
	To            string            `json:"to"`
	Type          inbox.MessageType `json:"type"` // message, result, shutdown_request…
	MessageID     string            `json:"message_id,omitempty"`
	CorrelationID string            `json:"correlation_id,omitempty"`
	TaskID        string            `json:"task_id,omitempty"`
	Content       string            `json:"detail,omitempty"`
}

// Delivered is the event payload of a message once it is in its inbox.
func Delivered(m inbox.Message) MessageDelivered {
	return MessageDelivered{From: m.From, To: m.To, Type: m.Type, MessageID: m.ID,
		CorrelationID: m.CorrelationID, TaskID: m.TaskID, Content: m.Content}
}

// ToolCall: an agent's tool call ended and its result is in the conversation.
type ToolCall struct {
	Tool    string `json:"tool"`
	Args    string `json:"args,omitempty"`
	Result  string `json:"detail,omitempty"`
	IsError bool   `json:"is_error,omitempty"` // the tool refused or failed
	Turn    int    `json:"turn,omitempty"`
	Diff    string `json:"diff,omitempty"` // write_file, edit_file: the unified diff the write made; bash: of the files the person's tools run later
}

// Reply: an agent's model turn answered (text, tool calls, or both).
type Reply struct {
	Text   string `json:"detail,omitempty"`
	Tokens int    `json:"tokens,omitempty"` // the turn's total token usage
	Turn   int    `json:"turn,omitempty"`
	// Reasoning is the model's thinking before this reply, when it sent
	// some (DeepSeek's reasoning_content, OpenRouter's reasoning…).
	Reasoning string `json:"reasoning,omitempty"`
}

// Answer: the lead's final reply to the person at the end of a chat cycle,
// or, Interrupted, the note that the person cut the cycle short.
type Answer struct {
	Text        string `json:"detail,omitempty"`
	Tokens      int    `json:"tokens,omitempty"` // the lead's total token usage so far
	Interrupted bool   `json:"interrupted,omitempty"`
	// Usage is every agent's tokens and cost, and the team's total: `run
	// --json`'s closing answer carries it.
	Usage *registry.TeamUsage `json:"usage,omitempty"`
}

// Retry: a model call failed in a way worth trying again, and will be
// tried again after Delay.
type Retry struct {
	Attempt    int            `json:"attempt"`
	Cause      llm.RetryCause `json:"cause,omitempty"`
	HTTPStatus int            `json:"http_status,omitempty"` // 0 for a network failure
	Delay      time.Duration  `json:"-"`                     // written as delay_ms
	Err        string         `json:"detail,omitempty"`      // what failed, in the client's words
}

// RetryEvent is the event of a model client's retry (its OnRetry).
func RetryEvent(r llm.Retry) Event {
	p := Retry{Attempt: r.Attempt, Cause: r.Cause, HTTPStatus: r.Status, Delay: r.Wait}
	if r.Err != nil {
		p.Err = r.Err.Error()
	}
	return Event{Agent: r.Agent, Payload: p}
}

// ErrorClass says what failed, for a program that reads the log.
type ErrorClass string

// Classes of failure.
const (
	ClassModel    ErrorClass = "model"    // the model server, or its answer
	ClassInbox    ErrorClass = "inbox"    // reading, appending to or marking an inbox
	ClassSession  ErrorClass = "session"  // an agent's conversation file
	ClassRegistry ErrorClass = "registry" // team/config.json
	ClassBoard    ErrorClass = "board"    // the task board
	ClassStorage  ErrorClass = "storage"  // a full or read-only disk, or events.jsonl that cannot be written
	ClassBudget   ErrorClass = "budget"   // the run's budget of calls, tokens or cost is spent
	// The chat's budget is spent and the person is asked whether to go on.
	ClassBudgetAsk ErrorClass = "budget_ask"
	ClassInternal  ErrorClass = "internal" // a bug, caught
)

// Failure (kind "error"): something failed; Text says what, in words.
type Failure struct {
	Class ErrorClass `json:"class,omitempty"`
	Text  string     `json:"detail"`
}

// BadLine: an inbox line that does not parse was set aside.
type BadLine struct {
	Reason string `json:"detail"` // where it is and why it does not parse
	Line   string `json:"line,omitempty"`
}

// Repair: a teammate left queued or working by a process that is gone was marked failed.
type Repair struct {
	Status registry.Status `json:"status"`
	Reason string          `json:"detail"`
}

// Settled: the team settled; Final is the lead's last answer.
type Settled struct {
	Final string `json:"detail,omitempty"`
}

// TaskChange is what happened to a task on the board.
type TaskChange string

// Changes of a task.
const (
	TaskChangeCreated     TaskChange = "created"
	TaskChangeClaimed     TaskChange = "claimed"
	TaskChangeAutoClaimed TaskChange = "auto_claimed"
	TaskChangeBlockers    TaskChange = "blockers_set"
	TaskChangeCompleted   TaskChange = "completed"
	TaskChangeReleased    TaskChange = "released"
	TaskChangeHandedOver  TaskChange = "handed_over"
)

// TaskChanged: an agent changed a task on the board.
type TaskChanged struct {
	Change    TaskChange       `json:"change"`
	TaskID    string           `json:"task_id"`
	Subject   string           `json:"subject"`
	Status    board.TaskStatus `json:"status"`               // the task's status after the change
	BlockedBy []string         `json:"blocked_by,omitempty"` // blockers_set: what it waits for now
	Unblocks  []string         `json:"unblocks,omitempty"`   // completed: the tasks it freed
	WasOwner  string           `json:"was_owner,omitempty"`  // released
	To        string           `json:"to,omitempty"`         // handed_over: the new owner
}

// Compacted: an agent's conversation was shortened to fit the context window.
type Compacted struct {
	Dropped int `json:"dropped"` // how many earlier messages
	Turn    int `json:"turn,omitempty"`
}

// Instructions: the AGENTS.md files an agent is given changed (or were
// read for the first time): which it reads, and a sentence for each
// skipped or cut.
type Instructions struct {
	Files []string `json:"files,omitempty"`
	// Summary names them by name and count: "AGENTS.md ×2, CLAUDE.md".
	Summary string   `json:"summary,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// HandoffChanged: one side of a handoff changed state.
type HandoffChanged struct {
	RequestID string                 `json:"request_id"`
	Side      registry.HandoffSide   `json:"side"`
	Task      string                 `json:"task"`
	TaskID    string                 `json:"task_id,omitempty"`
	Peer      string                 `json:"peer"`
	State     registry.HandoffStatus `json:"status"`
	Reason    string                 `json:"reason,omitempty"`
}

// Activity: what an agent does this moment: it waits for the model
// (thinking), or runs a tool.
type Activity struct {
	Tool string `json:"tool,omitempty"`
}

// RequestRef names a protocol request and its parties.
type RequestRef struct {
	ID          string      `json:"request_id"`
	RequestKind RequestKind `json:"request_kind"`
	From        string      `json:"from"` // who asks
	To          string      `json:"to"`   // who is asked
}

// RequestOpened: a protocol request was made and waits for its answer until Deadline.
type RequestOpened struct {
	RequestRef
	Deadline time.Time `json:"deadline"`
	// Text is what is asked about: the reason to shut down, the plan, the task handed over.
	Text string `json:"detail,omitempty"`
}

// ByRuntime is who answered when the program answered for an agent.
const ByRuntime = "runtime"

// RequestAnswered: a protocol request got its answer, or ended with an outcome
// before one (a request that could not be delivered fails).
type RequestAnswered struct {
	RequestRef
	By      string  `json:"by"` // the agent or person who answered, or ByRuntime
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"detail,omitempty"` // the reason, or the feedback on a plan
}

// RequestExpired: a protocol request's deadline passed without an answer.
type RequestExpired struct {
	RequestRef
	Outcome Outcome `json:"outcome"` // what the program did then: expired, forced
	Reason  string  `json:"detail,omitempty"`
}

// WorktreeAction is what happened to a teammate's worktree.
type WorktreeAction string

// Actions on a worktree.
const (
	WorktreeCreated    WorktreeAction = "created"
	WorktreeCommitted  WorktreeAction = "committed" // its work was committed on its branch
	WorktreeMerged     WorktreeAction = "merged"
	WorktreeConflicted WorktreeAction = "conflicted" // the merge was aborted; the teammate was asked to resolve
	WorktreeRemoved    WorktreeAction = "removed"    // merged, so removed with its branch
	WorktreeKept       WorktreeAction = "kept"       // not merged: the branch (and worktree) stay
)

// WorktreeChanged: a teammate's worktree changed (see WorktreeAction).
type WorktreeChanged struct {
	Action    WorktreeAction `json:"action"`
	Branch    string         `json:"branch"`
	Into      string         `json:"into,omitempty"` // the lead's branch, for merges
	Path      string         `json:"path,omitempty"` // the worktree, relative to the workspace
	Stat      string         `json:"diffstat,omitempty"`
	Conflicts []string       `json:"conflicts,omitempty"`
	Reason    string         `json:"detail,omitempty"`
}

// Permission: a tool call was allowed or denied by a rule, the mode, the
// one asked (the person, the lead) or the runtime (nobody to ask, no answer
// in time). A write carries the unified diff it makes (or made).
type Permission struct {
	Tool      string `json:"tool"`
	Subject   string `json:"subject,omitempty"`    // the command, or the file's path
	Decision  string `json:"decision"`             // asked, allowed, denied
	By        string `json:"by"`                   // rule, mode, user, lead, runtime; for an ask, who is asked
	Why       string `json:"detail,omitempty"`     // the rule or mode, or the answer's reason
	RequestID string `json:"request_id,omitempty"` // the ask, when one was made
	Diff      string `json:"diff,omitempty"`
	// Prefix, on an ask, is the wider rule the person may allow for the
	// session (go test *), "" when there is none.
	Prefix string `json:"prefix,omitempty"`
}

// HookRun: one of the person's hook commands ran for an event of the
// agent's life: it let the step go on (ok), blocked it, or failed (it hung,
// crashed, was missing or answered badly: the step went on).
type HookRun struct {
	Event      string `json:"event"` // PreToolUse, Stop…
	Command    string `json:"command"`
	Tool       string `json:"tool,omitempty"`
	Decision   string `json:"decision"`  // ok, blocked, failed
	ExitCode   int    `json:"exit_code"` // -1: it did not exit by itself
	DurationMS int64  `json:"duration_ms"`
	Text       string `json:"detail,omitempty"` // the reason it blocked, or what went wrong
}

// Prompt: the person said this to the lead of the process that runs the
// team (chat's input, run's task, an MCP client's team_run): in the log,
// a chat watching from another process shows it.
type Prompt struct {
	Text string `json:"detail"`
}

// Intake: an agent took these inbox messages into its conversation, in
// this order, before its next model turn. Only the subscriber gets it (the
// messages are already in the inbox files and message events).
type Intake struct {
	Messages []inbox.Message `json:"messages"`
}

// Kind implementations: one kind per payload type.

func (Spawn) Kind() EventKind            { return EventSpawn }
func (StatusChanged) Kind() EventKind    { return EventStatus }
func (MessageDelivered) Kind() EventKind { return EventMessage }
func (ToolCall) Kind() EventKind         { return EventToolCall }
func (Reply) Kind() EventKind            { return EventReply }
func (Answer) Kind() EventKind           { return EventAnswer }
func (Retry) Kind() EventKind            { return EventRetry }
func (Failure) Kind() EventKind          { return EventError }
func (BadLine) Kind() EventKind          { return EventBadLine }
func (Repair) Kind() EventKind           { return EventRepair }
func (Settled) Kind() EventKind          { return EventSettled }
func (TaskChanged) Kind() EventKind      { return EventTask }
func (Instructions) Kind() EventKind     { return EventInstructions }
func (Compacted) Kind() EventKind        { return EventCompacted }
func (HandoffChanged) Kind() EventKind   { return EventHandoff }
func (Activity) Kind() EventKind         { return EventActivity }
func (Intake) Kind() EventKind           { return EventIntake }
func (RequestOpened) Kind() EventKind    { return EventRequestOpened }
func (RequestAnswered) Kind() EventKind  { return EventRequestAnswered }
func (RequestExpired) Kind() EventKind   { return EventRequestExpired }
func (WorktreeChanged) Kind() EventKind  { return EventWorktree }
func (Permission) Kind() EventKind       { return EventPermission }
func (HookRun) Kind() EventKind          { return EventHook }
func (Prompt) Kind() EventKind           { return EventPrompt }

// text is what the agent was given, in a line.
func (p Instructions) text() string {
	s := "reads no AGENTS.md"
	if len(p.Files) > 0 {
		s = "reads " + strings.Join(p.Files, ", ")
	}
	if len(p.Notes) > 0 {
		s += " (" + strings.Join(p.Notes, " ") + ")"
	}
	return s
}
