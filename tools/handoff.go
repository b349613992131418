package tools

import (
	"context"

	"github.com/agentteam/agentteam/inbox"
)

type handoffArgs struct {
	To      string `json:"to" description:"Who takes the task over: a teammate's name, or lead."`
	Task    string `json:"task" description:"A task id from the board that you own (e.g. t3), or a short description of the work if it is not on the board."`
	Reason  string `json:"reason" description:"Why you hand it over, in one sentence."`
	Context string `json:"context" description:"Your summary for the receiver: what is done, what is left, decisions you made and why, pitfalls."`
}

// newHandoff hands agent's tasks over through p.
func newHandoff(p Protocols, agent string) Tool {
	return newTool(HandoffName,
		"Hand a task you own, with your context, to another agent. The receiver's runtime accepts, or rejects when it is busy, "+
			"shut down or of another role than the task asks for; on acceptance your summary, the files you wrote or edited and what you did "+
			"are sent to it, and once it acknowledges, the task (and its board entry) is its. Until then, or if any step fails, the task stays yours. "+
			"The result says how it went; the steps also arrive as messages.",
		func(ctx context.Context, a handoffArgs) (Result, error) {
			if err := inbox.ValidateName(a.To); err != nil {
				return Errorf("%v", err), nil
			}
			for _, f := range []struct{ name, value string }{{"task", a.Task}, {"reason", a.Reason}, {"context", a.Context}} {
				if err := nonEmpty(f.name, f.value); err != nil {
					return Errorf("%v", err), nil
				}
			}
			if a.To == agent {
				return Errorf("you cannot hand a task to yourself"), nil
			}
			// The arguments are the spec, field for field.
			out, err := p.Handoff(ctx, agent, HandoffSpec(a))
			if err != nil {
				return Errorf("could not hand %s to %s: %v", a.Task, a.To, err), nil
			}
			return Text(out), nil
		})
}
