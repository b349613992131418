package team

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
)

// newHandoffs is the team's handoffs, built once its requests, registry
// and roster are.
func newHandoffs(t *Team) *handoff.Service {
	return handoff.New(handoff.Deps{Requests: t.requests, Events: t.events, Registry: t.reg,
		Board: lazyBoard{t}, Changed: func(agent string, c event.TaskChanged, task board.Task) { t.tasks.Emit(agent, c, task) },
		Agents: handoffAgents{t}, Timeout: t.opts.HandoffTimeout, Failure: failure,
		Go: func(fn func(context.Context)) {
			t.wg.Go(func() {
				ctx, cancel := context.WithCancel(t.root)
				defer cancel()
				fn(ctx)
			})
		},
		Notify: t.changed.notify, Stopped: func() bool { return t.root.Err() != nil }})
}

// lazyBoard is the team's task board, which Open makes after the handoffs.
type lazyBoard struct{ t *Team }

func (b lazyBoard) Read(ctx context.Context) (board.File, error) {
	return b.t.tasks.Board().Read(ctx)
}

func (b lazyBoard) HandOver(ctx context.Context, id, from, to string) (board.Task, error) {
	return b.t.tasks.Board().HandOver(ctx, id, from, to)
}

// handoffAgents are the team's agents as its handoffs see them.
type handoffAgents struct{ t *Team }

func (a handoffAgents) Conversation(name string) ([]openai.ChatCompletionMessage, bool) {
	return a.t.Conversation(name)
}

// Receiver is a teammate this process runs, else one a worker runs (or
// that waits for one), else the roster's refusal.
func (a handoffAgents) Receiver(ctx context.Context, name string) (handoff.Receiver, error) {
	t := a.t
	m, err := t.roster.member(ctx, name)
	if err == nil {
		return handoff.Receiver{Here: true, Status: t.roster.statusOf(m), Role: m.role}, nil
	}
	mb, elsewhere := t.hosting.remote(ctx, name)
	if !elsewhere {
		return handoff.Receiver{}, err
	}
	alive := mb.Worker == "" || t.hosting.host.Alive(mb.Worker)
	return handoff.Receiver{Status: mb.Status, Role: mb.Role, Ended: mb.Ended, Worker: mb.Worker, WorkerAlive: alive}, nil
}
