// Package plugs is the person's plug-ins as each agent of a team meets
// them:
//   - its hooks (internal/plug/hooks) at points of its life, each run an
//     event.HookRun; a hook that blocks a step is told to whoever took it:
//     the model (a tool call, a task change, the end of its turn) or the
//     person (their prompt);
//   - its AGENTS.md files (internal/plug/agentsmd), read before each of its
//     cycles, with an event when what it is given changes.
package plugs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentteam/agentteam/internal/plug/agentsmd"
	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// Options are a team's plug-ins and what they tell of its agents.
type Options struct {
	Hooks        *hooks.Runner    // nil: none
	Instructions *agentsmd.Loader // nil: no AGENTS.md files are read
	Events       event.Sink
	TeamName     string
	Workspace    string // the team's directory
	// SessionPath is an agent's conversation file ("" when it is kept
	// elsewhere), for the hooks' transcript_path.
	SessionPath func(agent string) string
	// Policy is an agent's permission rules (nil: none), which its
	// AGENTS.md files may not get round.
	Policy func(agent string) permission.Policy
}

// Plugs are the plug-ins of one team's agents.
type Plugs struct{ o Options }

// New is the plug-ins o describes.
func New(o Options) *Plugs { return &Plugs{o: o} }

// For is the agent name of role, working in cwd ("" for the workspace).
func (p *Plugs) For(name, role, cwd string) Agent {
	if cwd == "" {
		cwd = p.o.Workspace
	}
	return Agent{p: p, name: name, role: role, cwd: cwd}
}

// Agent is one agent as its hooks and files see it.
type Agent struct {
	p          *Plugs
	name, role string
	cwd        string // its worktree, or the workspace
}

// input is the hook input of ev for the agent, with the fields every event has.
func (a Agent) input(ev hooks.Event) hooks.Input {
	o := a.p.o
	in := hooks.Input{SessionID: o.TeamName + "/" + a.name, Cwd: a.cwd, HookEventName: ev,
		Agent: a.name, Role: a.role, Workspace: o.Workspace, TeamName: o.TeamName}
	if o.SessionPath != nil {
		in.TranscriptPath = o.SessionPath(a.name)
	}
	return in
}

// run runs the hooks of in's event and logs each run as the agent's event.
func (a Agent) run(ctx context.Context, in hooks.Input) hooks.Outcome {
	return a.p.o.Hooks.Run(ctx, in, func(r hooks.Report) {
		a.p.o.Events.Emit(event.Event{Agent: a.name, Payload: event.HookRun{Event: string(r.Event), Command: r.Command, Tool: r.Tool,
			Decision: r.Decision, ExitCode: r.ExitCode, DurationMS: r.Duration.Milliseconds(), Text: r.Text}})
	})
}

// Has reports whether the person has hooks of ev.
func (a Agent) Has(ev hooks.Event) bool { return a.p.o.Hooks.Has(ev) }

// ToolHooks are the agent's PreToolUse and PostToolUse hooks; nil when
// there are none.
func (a Agent) ToolHooks() tools.ToolHooks {
	if !a.Has(hooks.PreToolUse) && !a.Has(hooks.PostToolUse) {
		return nil
	}
	return a
}

// toolInput is a call's arguments as JSON; arguments that are not JSON
// (the tool will refuse them) reach the hook as a string, so no hook is
// skipped for them.
func toolInput(args json.RawMessage) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

// BeforeTool runs the PreToolUse hooks (tools.ToolHooks).
func (a Agent) BeforeTool(ctx context.Context, tool string, args json.RawMessage) (bool, string) {
	if !a.Has(hooks.PreToolUse) {
		return true, ""
	}
	in := a.input(hooks.PreToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = tool, toolInput(args), tools.CallID(ctx)
	out := a.run(ctx, in)
	return !out.Blocked, out.Reason
}

// AfterTool runs the PostToolUse hooks (tools.ToolHooks): a hook that
// blocks, or adds context, gives the model a note with the result.
func (a Agent) AfterTool(ctx context.Context, tool string, args json.RawMessage, res tools.Result) string {
	if !a.Has(hooks.PostToolUse) {
		return ""
	}
	in := a.input(hooks.PostToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = tool, toolInput(args), tools.CallID(ctx)
	in.ToolResponse = &hooks.ToolResponse{Content: res.Content, IsError: res.IsError}
	out := a.run(ctx, in)
	switch {
	case out.Blocked && out.Context != "":
		return out.Reason + "\n" + out.Context
	case out.Blocked:
		return out.Reason
	}
	return out.Context
}

// OnStop runs, when the agent ends its turn without a tool call, its Stop
// hooks and, for a teammate, then its TeammateIdle hooks; the first that
// blocks keeps it working with the reason (loop.AgentConfig.OnStop). nil
// when there are none.
func (a Agent) OnStop(teammate bool) func(context.Context, string, bool) string {
	idle := teammate && a.Has(hooks.TeammateIdle)
	if !a.Has(hooks.Stop) && !idle {
		return nil
	}
	return func(ctx context.Context, final string, again bool) string {
		in := a.input(hooks.Stop)
		in.StopHookActive, in.LastAssistantMessage = &again, final
		if out := a.run(ctx, in); out.Blocked {
			return "a Stop hook says: " + out.Reason
		}
		if !idle {
			return ""
		}
		in = a.input(hooks.TeammateIdle)
		in.TeammateName = a.name
		if out := a.run(ctx, in); out.Blocked {
			return "a TeammateIdle hook says: " + out.Reason
		}
		return ""
	}
}

// SessionStart runs the SessionStart hooks of an agent that starts (source
// "startup") or resumes ("resume"), and is what they say for its system
// prompt ("" for nothing).
func (a Agent) SessionStart(ctx context.Context, source string) string {
	if !a.Has(hooks.SessionStart) {
		return ""
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	in := a.input(hooks.SessionStart)
	in.Source = source
	out := a.run(ctx, in)
	if out.Context == "" {
		return ""
	}
	return "\n\n# From the person's SessionStart hooks\n\n" + out.Context
}

// HookBlockedError is the person's prompt refused by a UserPromptSubmit hook.
type HookBlockedError struct{ Reason string }

func (e *HookBlockedError) Error() string {
	return "a UserPromptSubmit hook refused the prompt: " + e.Reason
}

// SubmitPrompt runs the UserPromptSubmit hooks on the person's prompt to
// the agent (the lead); it is what they add, or why they refused it.
func (a Agent) SubmitPrompt(ctx context.Context, prompt string) (string, error) {
	if !a.Has(hooks.UserPromptSubmit) {
		return "", nil
	}
	in := a.input(hooks.UserPromptSubmit)
	in.Prompt = prompt
	out := a.run(ctx, in)
	if out.Blocked {
		return "", &HookBlockedError{Reason: out.Reason}
	}
	if out.Context == "" {
		return "", nil
	}
	return "Context from the person's UserPromptSubmit hooks:\n" + out.Context, nil
}

// TaskHook runs the TaskCreated or TaskCompleted hooks for the agent; an
// error is the refusal the model reads.
func (a Agent) TaskHook(ctx context.Context, ev hooks.Event, id, subject, description string) error {
	if !a.Has(ev) {
		return nil
	}
	in := a.input(ev)
	in.TaskID, in.TaskSubject, in.TaskDescription = id, subject, description
	out := a.run(ctx, in)
	if !out.Blocked {
		return nil
	}
	if ev == hooks.TaskCompleted {
		return fmt.Errorf("%s stays open: a TaskCompleted hook says: %s", id, out.Reason)
	}
	return fmt.Errorf("the task was not created: a TaskCreated hook says: %s", out.Reason)
}
