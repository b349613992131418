package team

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// The person's hooks (Options.Hooks) run at points of each agent's life;
// every run is a HookRun event. A hook that blocks a step is told to whoever
// took the step: the model (a tool call, a task change, the end of its
// turn) or the person (their prompt).

// hookAgent is the agent a hook runs for: its name, role and where it works.
type hookAgent struct {
	t          *Team
	name, role string
	cwd        string // its worktree, or the workspace
}

// hookAgent is name's; root is its worktree ("" for the workspace).
func (t *Team) hookAgent(name, role, root string) hookAgent {
	if root == "" {
		root = t.ws.Root
	}
	return hookAgent{t: t, name: name, role: role, cwd: root}
}

// hookAgentNamed is the agent of that name this process runs, as far as
// it knows it (the lead, or one of its teammates).
func (t *Team) hookAgentNamed(name string) hookAgent {
	if name == workspace.LeadName {
		return t.hookAgent(name, "lead", "")
	}
	t.roster.mu.Lock()
	m := t.roster.members[name]
	t.roster.mu.Unlock()
	if m == nil {
		return t.hookAgent(name, "", "")
	}
	return t.hookAgent(name, m.role, m.root)
}

// input is the hook input of ev for the agent, with the fields every event has.
func (a hookAgent) input(ev hooks.Event) hooks.Input {
	in := hooks.Input{SessionID: a.t.teamName() + "/" + a.name, Cwd: a.cwd, HookEventName: ev,
		Agent: a.name, Role: a.role, Workspace: a.t.ws.Root, TeamName: a.t.teamName()}
	if a.name == workspace.LeadName {
		in.TranscriptPath = a.t.ws.SessionPath(a.name)
	} else {
		in.TranscriptPath = a.t.teammateSessionPath(a.name)
	}
	return in
}

// run runs the hooks of in's event and logs each run as the agent's event.
func (a hookAgent) run(ctx context.Context, in hooks.Input) hooks.Outcome {
	return a.t.opts.Hooks.Run(ctx, in, func(r hooks.Report) {
		a.t.events.Emit(event.Event{Agent: a.name, Payload: event.HookRun{Event: string(r.Event), Command: r.Command, Tool: r.Tool,
			Decision: r.Decision, ExitCode: r.ExitCode, DurationMS: r.Duration.Milliseconds(), Text: r.Text}})
	})
}

func (a hookAgent) has(ev hooks.Event) bool { return a.t.opts.Hooks.Has(ev) }

// toolHooks are the agent's PreToolUse and PostToolUse hooks; nil when
// there are none.
func (a hookAgent) toolHooks() tools.ToolHooks {
	if !a.has(hooks.PreToolUse) && !a.has(hooks.PostToolUse) {
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
func (a hookAgent) BeforeTool(ctx context.Context, tool string, args json.RawMessage) (bool, string) {
	if !a.has(hooks.PreToolUse) {
		return true, ""
	}
	in := a.input(hooks.PreToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = tool, toolInput(args), tools.CallID(ctx)
	out := a.run(ctx, in)
	return !out.Blocked, out.Reason
}

// AfterTool runs the PostToolUse hooks (tools.ToolHooks): a hook that
// blocks, or adds context, gives the model a note with the result.
func (a hookAgent) AfterTool(ctx context.Context, tool string, args json.RawMessage, res tools.Result) string {
	if !a.has(hooks.PostToolUse) {
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

// onStop runs, when the agent ends its turn without a tool call, its Stop
// hooks and, for a teammate, then its TeammateIdle hooks; the first that
// blocks keeps it working with the reason (loop.AgentConfig.OnStop). nil
// when there are none.
func (a hookAgent) onStop(teammate bool) func(context.Context, string, bool) string {
	idle := teammate && a.has(hooks.TeammateIdle)
	if !a.has(hooks.Stop) && !idle {
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

// sessionStart runs the SessionStart hooks of an agent that starts (source
// "startup") or resumes ("resume"), and is what they say for its system
// prompt ("" for nothing).
func (a hookAgent) sessionStart(source string) string {
	if !a.has(hooks.SessionStart) {
		return ""
	}
	ctx, stop := context.WithCancel(a.t.root)
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

// submitPrompt runs the UserPromptSubmit hooks on the person's prompt to
// the lead; it is what they add for the lead, or why they refused it.
func (t *Team) submitPrompt(ctx context.Context, prompt string) (string, error) {
	a := t.hookAgent(workspace.LeadName, "lead", "")
	if !a.has(hooks.UserPromptSubmit) {
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

// sayToLead gives the lead the person's prompt once the UserPromptSubmit
// hooks let it through, followed by what they add.
func (t *Team) sayToLead(ctx context.Context, prompt string) error {
	extra, err := t.submitPrompt(ctx, prompt)
	if err != nil {
		return err
	}
	if err := t.lead.Say(prompt); err != nil {
		return err
	}
	t.events.Emit(event.Event{Agent: workspace.LeadName, Payload: event.Prompt{Text: prompt}})
	if extra != "" {
		return t.lead.Say(extra)
	}
	return nil
}

// taskHook runs the TaskCreated or TaskCompleted hooks for agent; an error
// is the refusal the model reads.
func (t *Team) taskHook(ctx context.Context, ev hooks.Event, agent, id, subject, description string) error {
	a := t.hookAgentNamed(agent)
	if !a.has(ev) {
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
