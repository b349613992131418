package team

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/plugs"
	"github.com/agentteam/agentteam/team/prompt"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

func (t *Team) newLead(ctx context.Context) (*loop.Agent, error) {
	choice, err := t.meters.models.Model("", "")
	if err != nil {
		return nil, fmt.Errorf("the lead's model: %w", err)
	}
	// A resumed lead goes on counting where it stopped, on the model it
	// was last switched to (/model).
	var used registry.Usage
	if t.opts.Resume {
		if c, err := t.reg.Read(ctx); err == nil && c.Lead != nil {
			used = c.Lead.Usage
			choice = t.meters.resumeLead(c.Lead.ModelRef, choice)
		}
	}
	t.meters.lead = t.meters.forAgent(choice, used)
	hk, source := t.plugs.For(inbox.LeadName, "lead", ""), "startup"
	if t.opts.Resume {
		source = "resume"
	}
	lead, err := loop.NewAgent(ctx, loop.AgentConfig{
		Name:   inbox.LeadName,
		System: prompt.Lead(t.opts.teamName(), t.ws.Root, t.meters.Catalog()) + hk.SessionStart(t.root, source),
		// Its AGENTS.md files, read again at each cycle.
		Instructions: hk.Instructions(),
		Model:        t.meters.lead,
		Inbox:        agentInbox{Inbox: t.store, plans: t.plans},
		SessionPath:  t.ws.SessionPath(inbox.LeadName),
		Session:      fencedSession{SessionLog: loop.FileSession(t.ws.SessionPath(inbox.LeadName)), fence: t.faults.Fence},
		MaxTurns:     t.opts.MaxTurns,
		OnEvent:      agentEvents(t.events),
		OnDelta:      t.opts.OnDelta,
		Recover:      t.messenger.recoverCall(inbox.LeadName),
		// The window of the lead's first model; a switch (/model) keeps
		// what the loop learned of it.
		ContextWindow: choice.ContextWindow,
		ReplyReserve:  choice.ReplyReserve,
		OnStop:        hk.OnStop(false),
	})
	if err != nil {
		return nil, fmt.Errorf("start the lead: %w", err)
	}
	lead.SetTools(tools.ForLead(tools.Env{
		Agent:       inbox.LeadName,
		Workspace:   t.ws,
		Messenger:   t.messenger,
		Inbox:       lead,
		Team:        t.messenger,
		Tasks:       t.tasks,
		Protocols:   t.protocols,
		Merger:      t.placing,
		BashTimeout: t.opts.BashTimeout,
		Permission:  t.perms.Gate(inbox.LeadName, t.ws),
		Hooks:       hk.ToolHooks(),
		Reviewer:    t.perms.Reviewer(),
		Sandbox:     t.opts.Sandbox,
		Extra:       t.opts.MCP.Tools(inbox.LeadName, "lead", tools.DefaultOutputCap),
	}))
	return lead, nil
}

// fencedSession is the lead's session file, to which its process appends
// nothing once it no longer runs the team (fault.Latch.Fence): a lead run
// again in the same workspace by another process writes it now.
type fencedSession struct {
	loop.SessionLog
	fence func() error
}

func (s fencedSession) AppendLines(ctx context.Context, lines [][]byte) error {
	if err := s.fence(); err != nil {
		return fmt.Errorf("record the session of %s: %w", inbox.LeadName, err)
	}
	return s.SessionLog.AppendLines(ctx, lines)
}

// Lines reads the file afresh, letting go of the one kept open for
// appends: a reload (SwitchSession) may have renamed it meanwhile.
func (s fencedSession) Lines(ctx context.Context) ([][]byte, error) {
	_ = s.SessionLog.Close()
	return s.SessionLog.Lines(ctx)
}

// EachLine is Lines one line at a time (loop.LineReader).
func (s fencedSession) EachLine(ctx context.Context, fn func([]byte)) error {
	_ = s.SessionLog.Close()
	return loop.EachLine(ctx, s.SessionLog, fn)
}

// agentEvents turns an agent's loop events into team events.
func agentEvents(events EventSink) func(loop.Event) {
	return func(e loop.Event) { agentEvent(events, e) }
}

func agentEvent(events EventSink, e loop.Event) {
	switch e.Kind {
	case loop.EventTurn:
		events.Notify(event.Event{Agent: e.Agent, Payload: event.Activity{}})
	case loop.EventToolStart:
		events.Notify(event.Event{Agent: e.Agent, Payload: event.Activity{Tool: e.Tool}})
	case loop.EventToolCall:
		events.Emit(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.ToolCall{Tool: e.Tool, Args: e.Args,
			Result: e.Result, IsError: e.IsError, Turn: e.Turn, Diff: e.Diff}})
	case loop.EventReply:
		events.Emit(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.Reply{Text: e.Result, Tokens: e.Usage.TotalTokens, Turn: e.Turn, Reasoning: e.Reasoning}})
	case loop.EventBadLine:
		events.Emit(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.BadLine{Reason: e.Err, Line: e.Result}})
	case loop.EventError:
		events.Emit(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.Failure{Class: sourceClass(e.Source), Text: e.Err}})
	case loop.EventInbox:
		events.Notify(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.Intake{Messages: e.Messages}})
	case loop.EventCompacted:
		events.Emit(event.Event{Time: e.Time, Agent: e.Agent, Payload: event.Compacted{Dropped: e.Dropped, Turn: e.Turn}})
	}
}

// sourceClass is the class of failure of a step of an agent's loop.
func sourceClass(s loop.ErrorSource) event.ErrorClass {
	switch s {
	case loop.SourceModel:
		return event.ClassModel
	case loop.SourceInbox:
		return event.ClassInbox
	case loop.SourceSession:
		return event.ClassSession
	}
	return ""
}

// cycleErrorClass is the class of failure of an error that ended a cycle.
func cycleErrorClass(err error) event.ErrorClass { return sourceClass(loop.SourceOf(err)) }

// Run gives the lead a prompt and runs the team until it settles:
// the lead's last turn ended without tool calls, no teammate is queued or
// working, and no agent has unread messages that would wake it. It returns
// the lead's final answer. Teammates are then shut down.
//
// A full disk stops the team (fault.Latch.CheckStorage): Run then returns the
// *StorageError that says so.
func (t *Team) Run(ctx context.Context, prompt string) (final string, err error) {
	// Only a full disk ends the lead early; the caller's own deadline or
	// cancel reaches it through ctx, with its own error.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-t.faults.Halted():
			stop()
		case <-ctx.Done():
		}
	}()
	defer func() {
		if f := t.faults.Err(); f != nil {
			err = f // settled or not, a run that lost writes has not succeeded
		} else {
			err = fault.AsStorageError(err)
		}
	}()
	if err := t.turns.say(ctx, prompt); err != nil {
		return "", err
	}
	wake := t.store.Watch(ctx, inbox.LeadName)
	for {
		cycle, err := t.lead.RunCycle(ctx)
		t.meters.writeLeadUsage()
		switch {
		case err == nil:
			final = cycle.Final
		case errors.Is(err, loop.ErrNothingToDo):
		case errors.Is(err, loop.ErrTurnLimit):
			final = cycle.Final
		default:
			return final, err
		}
		woke, err := t.turns.waitOrSettled(ctx, wake)
		if err != nil {
			return final, err
		}
		if !woke {
			t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: event.Settled{Final: final}})
			t.ShutdownAll("the team settled")
			return final, nil
		}
	}
}

// settled reports whether no teammate of this process is queued or working
// and none that could wake has unread messages.
func (r *roster) settled(ctx context.Context) bool {
	t := r.t
	r.mu.Lock()
	type st struct {
		name   string
		status registry.Status
	}
	list := make([]st, 0, len(r.members))
	for _, m := range r.members {
		list = append(list, st{m.name, m.status})
	}
	r.mu.Unlock()
	for _, m := range list {
		switch m.status {
		case registry.StatusQueued, registry.StatusWorking:
			return false
		case registry.StatusIdle:
			if t.inboxes.hasUnread(ctx, m.name) {
				return false
			}
		}
	}
	// Teammates on other workers of a team across hosts (worker.go).
	return t.hosting == nil || t.hosting.remoteSettled(ctx)
}

// ShutdownAll stops every teammate of this process and marks the idle ones
// shutdown; failed ones stay failed.
func (t *Team) ShutdownAll(reason string) {
	t.roster.stopAll(func(m *registry.Member) {
		if m.Status != registry.StatusFailed && m.Status != registry.StatusShutdown {
			m.Status, m.Activity, m.Error = registry.StatusShutdown, "", ""
		}
	}, reason)
	if t.hosting != nil && t.lead != nil {
		t.hosting.shutdownRemote(reason) // and those on other workers
	}
}

// Abort stops every teammate after a timeout or interrupt. Statuses stay
// true: a teammate cut off mid-work is marked failed with the reason, an idle
// one stays idle (its conversation and inbox are intact).
// Teammates on other workers are asked to shut down, not waited for: the
// run is over, and they must not go on working for nobody.
func (t *Team) Abort(reason string) {
	t.roster.stopAll(func(m *registry.Member) {
		if m.Status == registry.StatusQueued || m.Status == registry.StatusWorking {
			m.Status, m.Activity, m.Error = registry.StatusFailed, "", reason
		}
	}, reason)
	if t.hosting != nil && t.lead != nil {
		t.hosting.sendRemoteStops(reason)
	}
}

// stopAll cancels every teammate goroutine of this process, waits for it to
// end, then lets change decide the member's final status.
func (r *roster) stopAll(change func(*registry.Member), reason string) {
	r.mu.Lock()
	list := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		list = append(list, m)
	}
	r.mu.Unlock()
	for _, m := range list {
		m.cancel()
		<-m.done
		r.mu.Lock()
		probe := registry.Member{Status: m.status}
		change(&probe)
		changed := probe.Status != m.status
		r.mu.Unlock()
		if !changed {
			continue
		}
		r.setStatus(m, probe.Status, reason, func(mb *registry.Member) { mb.Activity, mb.Error = probe.Activity, probe.Error })
	}
}

// leadTurns are the lead's turns as the person drives them: their
// prompts, through the hooks, and between its cycles the wait for its
// messages or for the team to settle.
type leadTurns struct {
	agent   *loop.Agent
	hooks   plugs.Agent
	events  EventSink
	inboxes *inboxes
	settled func(ctx context.Context) bool // no teammate works or would wake
	changed signal
	poll    time.Duration
}

// say gives the lead the person's prompt once the UserPromptSubmit
// hooks let it through, followed by what they add.
func (l *leadTurns) say(ctx context.Context, prompt string) error {
	extra, err := l.hooks.SubmitPrompt(ctx, prompt)
	if err != nil {
		return err
	}
	if err := l.agent.Say(ctx, prompt); err != nil {
		return err
	}
	l.events.Emit(event.Event{Agent: inbox.LeadName, Payload: event.Prompt{Text: prompt}})
	if extra != "" {
		return l.agent.Say(ctx, extra)
	}
	return nil
}

// waitOrSettled returns true when the lead has unread messages, false
// when the team has settled.
func (l *leadTurns) waitOrSettled(ctx context.Context, wake <-chan struct{}) (bool, error) {
	poll := time.NewTicker(l.poll)
	defer poll.Stop()
	for {
		if l.inboxes.hasUnread(ctx, inbox.LeadName) {
			return true, nil
		}
		if l.settled(ctx) {
			// Re-check the lead after the teammates: a report sent just
			// before the last teammate went idle is already on disk.
			if l.inboxes.hasUnread(ctx, inbox.LeadName) {
				return true, nil
			}
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-wake:
		case <-l.changed:
		case <-poll.C:
		}
	}
}
