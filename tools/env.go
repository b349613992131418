package tools

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/agentteam/agentteam/workspace"
)

// Defaults for Env fields left zero.
const (
	DefaultBashTimeout = 120 * time.Second
	DefaultOutputCap   = 30000
)

// Env holds what the tools of one agent need; ForLead and ForTeammate give
// each tool only its part.
type Env struct {
	Agent       string // the calling agent's name
	Workspace   *workspace.Workspace
	Messenger   Messenger
	Inbox       InboxReader
	Team        TeamManager   // lead only; nil for teammates
	Tasks       TaskBoard     // the shared task board; nil: no task tools
	BashTimeout time.Duration // default DefaultBashTimeout
	// OutputCap is how many bytes of tool output are kept (default
	// DefaultOutputCap); larger output is cut in the middle with a marker.
	OutputCap int
	// Protocols runs the team protocols; nil leaves their tools out.
	Protocols Protocols
	// Gate, when set, can close the write tools (plan mode).
	Gate WriteGate
	// PlanMode gives a teammate the submit_plan tool.
	PlanMode bool
	// Merger gives the lead merge_teammate; nil leaves it out.
	Merger Merger
	// Permission, when set, decides every tool call before it runs.
	Permission PermissionGate
	// Hooks, when set, run the person's hooks around every tool call.
	Hooks ToolHooks
	// Reviewer, when set, gives the lead the review_permission tool.
	Reviewer PermissionReviewer
	// Root is where bash runs and may write (the agent's worktree); ""
	// is the workspace's root.
	Root string
	// Sandbox confines bash; the zero value runs commands plainly.
	Sandbox Sandbox
	// Extra are tools from outside, the person's MCP servers' among them.
	// In plan mode, before approval, only those that say they are
	// read-only (ReadOnly() true) run.
	Extra []Tool
}

func (e Env) withDefaults() Env {
	if e.BashTimeout <= 0 {
		e.BashTimeout = DefaultBashTimeout
	}
	if e.OutputCap <= 0 {
		e.OutputCap = DefaultOutputCap
	}
	return e
}

// root is where the agent's commands run.
func (e Env) root() string {
	if e.Root == "" && e.Workspace != nil {
		return e.Workspace.Root
	}
	return e.Root
}

// protected are the directories commands never write: the team's state
// (inboxes, registry, conversations), which only the team writes.
func (e Env) protected() []string {
	if e.Workspace == nil {
		return nil
	}
	return []string{e.Workspace.StatePath()}
}

// ForLead is the lead's tool set: team tools plus everything a teammate has.
func ForLead(env Env) *Set {
	env = env.withDefaults()
	var review []Tool
	if env.Reviewer != nil {
		review = []Tool{newReviewPermission(env.Reviewer, env.Agent)}
	}
	return NewSet(slices.Concat(
		[]Tool{
			newSpawnTeammate(env.Team),
			newListTeammates(env.Team, env.OutputCap),
			newSendMessage(env.Messenger, env.Agent),
			newBroadcast(env.Messenger, env.Agent),
			newReadInbox(env.Inbox),
		},
		workTools(env), taskTools(env), leadProtocolTools(env), mergeTools(env), review, extraTools(env))...).guarded(env.Permission, env.Hooks)
}

// mergeTools are the lead's merge_teammate, given a Merger.
func mergeTools(env Env) []Tool {
	if env.Merger == nil {
		return nil
	}
	return []Tool{newMergeTeammate(env.Merger)}
}

// ForTeammate is a teammate's tool set: messaging, shell and files.
func ForTeammate(env Env) *Set {
	env = env.withDefaults()
	return NewSet(slices.Concat(
		[]Tool{
			newSendMessage(env.Messenger, env.Agent),
			newReadInbox(env.Inbox),
		},
		workTools(env), taskTools(env), teammateProtocolTools(env), extraTools(env))...).guarded(env.Permission, env.Hooks)
}

// workTools are the shell and the file tools, the same for every agent.
func workTools(env Env) []Tool {
	return []Tool{
		newBash(env.Agent, env.root(), env.protected(), env.Gate, env.Sandbox, env.BashTimeout, env.OutputCap),
		newReadFile(env.Workspace, env.OutputCap),
		newWriteFile(env.Workspace, env.Gate),
		newEditFile(env.Workspace, env.Gate),
	}
}

// leadProtocolTools are the lead's side of shutdown and plan approval, and
// handoff. Protocol tools are made only with Protocols set, so they need not
// check it.
func leadProtocolTools(env Env) []Tool {
	if env.Protocols == nil {
		return nil
	}
	return []Tool{
		newShutdownTeammate(env.Protocols, env.Agent),
		newReviewPlan(env.Protocols, env.Agent),
		newHandoff(env.Protocols, env.Agent),
	}
}

// teammateProtocolTools are a teammate's side: answering a shutdown, handing
// a task over, and submitting a plan when it was spawned in plan mode.
func teammateProtocolTools(env Env) []Tool {
	if env.Protocols == nil {
		return nil
	}
	ts := []Tool{newRespondShutdown(env.Protocols, env.Agent), newHandoff(env.Protocols, env.Agent)}
	if env.PlanMode {
		ts = append(ts, newSubmitPlan(env.Protocols, env.Agent))
	}
	return ts
}

// taskTools are the board's tools, for lead and teammates alike (the lead
// mostly creates, teammates claim and complete, but either may do both).
// They are made only with a board, so they need not check it.
func taskTools(env Env) []Tool {
	if env.Tasks == nil {
		return nil
	}
	return []Tool{
		newTaskCreate(env.Tasks, env.Agent),
		newTaskList(env.Tasks, env.OutputCap),
		newTaskClaim(env.Tasks, env.Agent),
		newTaskUpdate(env.Tasks, env.Agent),
	}
}

// extraTools are env.Extra, closed by the write gate unless read-only.
func extraTools(env Env) []Tool {
	out := make([]Tool, 0, len(env.Extra))
	for _, t := range env.Extra {
		if ro, ok := t.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
			out = append(out, t)
			continue
		}
		out = append(out, gatedTool{Tool: t, gate: env.Gate})
	}
	return out
}

// gatedTool runs only while its agent may change things.
type gatedTool struct {
	Tool
	gate WriteGate
}

func (g gatedTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	if why := writeRefusal(g.gate); why != "" {
		return Errorf("%s", why), nil
	}
	return g.Tool.Run(ctx, args)
}
