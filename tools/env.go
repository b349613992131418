package tools

import (
	"time"

	"github.com/agentteam/agentteam/workspace"
)

// Defaults for Env fields left zero.
const (
	DefaultBashTimeout = 120 * time.Second
	DefaultOutputCap   = 30000
)

// Env holds what the tools of one agent need.
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
}

// writeRefusal says why the agent may not change anything now, or "".
func (e Env) writeRefusal() string {
	if e.Gate == nil {
		return ""
	}
	if ok, why := e.Gate.WriteAllowed(); !ok {
		return why
	}
	return ""
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

// ForLead is the lead's tool set: team tools plus everything a teammate has.
func ForLead(env Env) *Set {
	env = env.withDefaults()
	return NewSet(append([]Tool{
		spawnTeammate{env},
		listTeammates{env},
		sendMessage{env},
		broadcast{env},
		readInbox{env},
		bashTool{env},
		readFile{env},
		writeFile{env},
		editFile{env},
	}, append(taskTools(env), leadProtocolTools(env)...)...)...)
}

// ForTeammate is a teammate's tool set: messaging, shell and files.
func ForTeammate(env Env) *Set {
	env = env.withDefaults()
	return NewSet(append([]Tool{
		sendMessage{env},
		readInbox{env},
		bashTool{env},
		readFile{env},
		writeFile{env},
		editFile{env},
	}, append(taskTools(env), teammateProtocolTools(env)...)...)...)
}

// leadProtocolTools are the lead's side of shutdown and plan approval, and handoff.
func leadProtocolTools(env Env) []Tool {
	if env.Protocols == nil {
		return nil
	}
	return []Tool{shutdownTeammate{env}, reviewPlan{env}, handoffTool{env}}
}

// teammateProtocolTools are a teammate's side: answering a shutdown, handing
// a task over, and submitting a plan when it was spawned in plan mode.
func teammateProtocolTools(env Env) []Tool {
	if env.Protocols == nil {
		return nil
	}
	ts := []Tool{respondShutdown{env}, handoffTool{env}}
	if env.PlanMode {
		ts = append(ts, submitPlan{env})
	}
	return ts
}

// taskTools are the board's tools, for lead and teammates alike (the lead
// mostly creates, teammates claim and complete, but either may do both).
func taskTools(env Env) []Tool {
	if env.Tasks == nil {
		return nil
	}
	return []Tool{taskCreate{env}, taskList{env}, taskClaim{env}, taskUpdate{env}}
}
