package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentteam/agentteam/workspace"
)

type handoffArgs struct {
	To      string `json:"to" description:"Who takes the task over: a teammate's name, or lead."`
	Task    string `json:"task" description:"A task id from the board that you own (e.g. t3), or a short description of the work if it is not on the board."`
	Reason  string `json:"reason" description:"Why you hand it over, in one sentence."`
	Context string `json:"context" description:"Your summary for the receiver: what is done, what is left, decisions you made and why, pitfalls."`
}

type handoffTool struct{ env Env }

func (handoffTool) Name() string { return HandoffName }

func (handoffTool) Description() string {
	return "Hand a task you own, with your context, to another agent. The receiver's runtime accepts, or rejects when it is busy, " +
		"shut down or of another role than the task asks for; on acceptance your summary, the files you wrote or edited and what you did " +
		"are sent to it, and once it acknowledges, the task (and its board entry) is its. Until then, or if any step fails, the task stays yours. " +
		"The result says how it went; the steps also arrive as messages."
}

func (handoffTool) Params() any { return handoffArgs{} }

func (t handoffTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a handoffArgs
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	if err := workspace.ValidateName(a.To); err != nil {
		return Errorf("%v", err), nil
	}
	for _, f := range []struct{ name, value string }{{"task", a.Task}, {"reason", a.Reason}, {"context", a.Context}} {
		if err := nonEmpty(f.name, f.value); err != nil {
			return Errorf("%v", err), nil
		}
	}
	if a.To == t.env.Agent {
		return Errorf("you cannot hand a task to yourself"), nil
	}
	if t.env.Protocols == nil {
		return Result{}, errors.New("no protocols configured")
	}
	out, err := t.env.Protocols.Handoff(ctx, t.env.Agent, HandoffSpec{To: a.To, Task: a.Task, Reason: a.Reason, Context: a.Context})
	if err != nil {
		return Errorf("could not hand %s to %s: %v", a.Task, a.To, err), nil
	}
	return Text(out), nil
}
