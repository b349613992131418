package team

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/event"
)

// Chat runs the lead for a person at a keyboard: it answers what the person
// says and, with auto on, wakes by itself when teammates report. Every answer
// is an EventAnswer; failures are EventError. It ends with its context.
type Chat struct {
	t    *Team
	auto atomic.Bool
	say  chan struct{} // coalesced: the person said something
	done chan struct{}
	// ended is signalled (coalesced) when the lead's cycles end, even ones
	// that found nothing to do and told nobody; running is true till then.
	ended   chan struct{}
	running atomic.Bool

	mu     sync.Mutex
	cancel context.CancelFunc // of the lead's current cycle, nil when idle
}

// StartChat starts the lead's interactive loop.
func (t *Team) StartChat(ctx context.Context, auto bool) *Chat {
	c := &Chat{t: t, say: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{}, 1)}
	c.auto.Store(auto)
	go c.run(ctx)
	return c
}

// Done is closed when the chat loop has ended.
func (c *Chat) Done() <-chan struct{} { return c.done }

// SetAuto switches waking on teammate reports on or off.
func (c *Chat) SetAuto(on bool) {
	c.auto.Store(on)
	if on {
		c.poke()
	}
}

// Auto reports whether the lead wakes by itself.
func (c *Chat) Auto() bool { return c.auto.Load() }

// Say gives the lead a message from the person; it is answered in order,
// after the lead's current turn if it is busy.
func (c *Chat) Say(text string) error {
	ctx, stop := context.WithCancel(c.t.root)
	defer stop()
	if err := c.t.turns.say(ctx, text); err != nil {
		return err
	}
	c.poke()
	return nil
}

// Busy reports whether the lead is running a cycle.
func (c *Chat) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel != nil
}

// CycleEnded is signalled when the lead's cycles have ended and their
// answers are told: Settled may have changed without an event.
func (c *Chat) CycleEnded() <-chan struct{} { return c.ended }

// Settled reports whether nothing moves by itself: no teammate of this
// process works, waits for a worker or has a message to take, the lead is
// not in a turn, and with auto on it has no unread message to start one.
func (c *Chat) Settled() bool {
	ctx := context.Background() // Settled is given no context
	if c.t.roster.moving(ctx) {
		return false
	}
	if c.auto.Load() && c.t.inboxes.hasUnread(ctx, inbox.LeadName) {
		return false
	}
	return !c.running.Load()
}

// Interrupt ends the lead's current cycle: tool calls in flight end, every
// call is answered, and the conversation stays valid. It reports whether a
// cycle was running.
func (c *Chat) Interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		return false
	}
	c.cancel()
	return true
}

// Compact summarizes the older half of the lead's conversation now, for
// the person's /compact; it says what it did.
func (c *Chat) Compact() string {
	n := c.t.lead.Compact()
	if n == 0 {
		return "The lead's conversation is too short to compact."
	}
	return fmt.Sprintf("Compacted the lead's conversation: %d earlier messages are a summary now (the session file keeps them all).", n)
}

func (c *Chat) poke() {
	select {
	case c.say <- struct{}{}:
	default:
	}
}

func (c *Chat) run(ctx context.Context) {
	defer close(c.done)
	defer func() {
		if r := recover(); r != nil {
			c.t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: event.Failure{Class: event.ClassInternal,
				Text: fmt.Sprintf("internal error: %v (please report this); the lead stopped", r)}})
		}
	}()
	wake := c.t.store.Watch(ctx, inbox.LeadName)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.say:
		case _, ok := <-wake:
			if !ok {
				return
			}
			if !c.auto.Load() {
				continue
			}
		}
		c.cycle(ctx)
	}
}

// cycle runs lead cycles until there is nothing new to answer.
func (c *Chat) cycle(ctx context.Context) {
	c.running.Store(true)
	defer func() {
		// After the turn's answer is told: whoever sees the lead still has seen it.
		c.running.Store(false)
		select {
		case c.ended <- struct{}{}:
		default:
		}
	}()
	for ctx.Err() == nil {
		turnCtx, cancel := context.WithCancel(ctx)
		c.mu.Lock()
		c.cancel = cancel
		c.mu.Unlock()
		cyc, err := c.t.lead.RunCycle(turnCtx)
		c.t.meters.writeLeadUsage()
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		interrupted := turnCtx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case errors.Is(err, loop.ErrNothingToDo):
			return
		case interrupted:
			c.t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: event.Answer{Interrupted: true, Tokens: c.t.lead.Usage().TotalTokens}})
			return
		case err != nil && !errors.Is(err, loop.ErrTurnLimit):
			if ctx.Err() == nil && !loop.Told(err) { // the loop's own error event already said it
				c.t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: failure(cycleErrorClass(err), "", err)})
			}
			return
		}
		c.t.events.Emit(event.Event{Agent: inbox.LeadName, Payload: event.Answer{Text: cyc.Final, Tokens: c.t.lead.Usage().TotalTokens}})
		// Reports that arrived during the cycle wake the lead again only with auto on.
		if !c.auto.Load() {
			return
		}
		if !c.t.inboxes.hasUnread(ctx, inbox.LeadName) {
			return
		}
	}
}
