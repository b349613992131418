package bridge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
)

// DebounceInterval is how long streamed text gathers before the screen shows it.
const DebounceInterval = 30 * time.Millisecond

// Item is one engine fact for the UI, in the order it happened: an event, or
// a run of streamed text of one agent.
type Item struct {
	Event *event.Event
	Delta *Chunk
}

// Chunk is streamed text gathered between two flushes.
type Chunk struct {
	Agent     string
	Restart   bool // discard what was shown of the agent's current reply first
	Text      string
	Reasoning string // thinking, which a turn streams before its text
}

// Batch carries engine facts to Update, in order, plus the latest activity of each agent.
type Batch struct {
	Items    []Item
	Activity map[string]string
}

// Bridge takes engine events and streamed text from agent goroutines without
// ever blocking them, and hands them to the UI in debounced batches. Only
// activity events are coalesced (latest per agent); answers, messages,
// statuses and text are never dropped.
type Bridge struct {
	mu       sync.Mutex
	items    []Item
	activity map[string]string
	wake     chan struct{}
	team     atomic.Pointer[team.Team]
	onEvent  func(event.Event) // extra non-blocking observer (the inbox poller's poke)
}

// New returns an empty Bridge; run it with Run.
func New() *Bridge {
	return &Bridge{activity: map[string]string{}, wake: make(chan struct{}, 1)}
}

// Event is the team's OnEvent subscriber.
func (b *Bridge) Event(e event.Event) {
	b.mu.Lock()
	if a, ok := e.Payload.(event.Activity); ok {
		b.activity[e.Agent] = a.Words()
	} else {
		// What the agent did before this event is stale now.
		delete(b.activity, e.Agent)
		ev := e
		b.items = append(b.items, Item{Event: &ev})
	}
	obs := b.onEvent
	b.mu.Unlock()
	b.signal()
	if obs != nil {
		obs(e)
	}
}

// Delta is the team's OnDelta subscriber.
func (b *Bridge) Delta(d llm.Delta) {
	if d.Content == "" && d.Reasoning == "" && !d.Restart {
		return
	}
	b.mu.Lock()
	var last *Chunk
	if n := len(b.items); n > 0 && b.items[n-1].Delta != nil && b.items[n-1].Delta.Agent == d.Agent {
		last = b.items[n-1].Delta
	} else {
		last = &Chunk{Agent: d.Agent}
		b.items = append(b.items, Item{Delta: last})
	}
	if d.Restart {
		last.Restart, last.Text, last.Reasoning = true, "", ""
	}
	if d.Reasoning != "" && last.Text != "" {
		// Thinking after text is a new turn's: it starts a new chunk.
		last = &Chunk{Agent: d.Agent}
		b.items = append(b.items, Item{Delta: last})
	}
	last.Text += d.Content
	last.Reasoning += d.Reasoning
	b.mu.Unlock()
	b.signal()
}

// Retry is the model client's OnRetry: the event goes to events.jsonl once
// the team is open, and to the status line in words.
func (b *Bridge) Retry(r llm.Retry) {
	e := event.RetryEvent(r)
	if t := b.team.Load(); t != nil {
		t.Emit(e) // comes back through Event
		return
	}
	b.Event(e)
}

// SetTeam lets Retry write to the team's event log.
func (b *Bridge) SetTeam(t *team.Team) { b.team.Store(t) }

// SetObserver gives every event to fn too, without blocking the agent.
func (b *Bridge) SetObserver(fn func(event.Event)) {
	b.mu.Lock()
	b.onEvent = fn
	b.mu.Unlock()
}

func (b *Bridge) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Take empties the queue.
func (b *Bridge) Take() (Batch, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) == 0 && len(b.activity) == 0 {
		return Batch{}, false
	}
	m := Batch{Items: b.items, Activity: b.activity}
	b.items, b.activity = nil, map[string]string{}
	return m, true
}

// Run forwards batches to send until ctx ends: it waits for a first fact,
// lets more gather for the debounce interval, then sends them all at once.
// send may block (a lagging UI); agents do not wait for it.
func (b *Bridge) Run(ctx context.Context, send func(tea.Msg), debounce time.Duration) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		}
		timer.Reset(debounce)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		if m, ok := b.Take(); ok {
			send(m)
		}
	}
}
