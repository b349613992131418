package engine

import (
	"context"
	"time"

	"github.com/agentteam/agentteam/team/event"
)

// followInterval is how often a watch looks at the event log.
const followInterval = 250 * time.Millisecond

// Follow hands a watch the events of a team another process runs, until
// ctx ends: each event the log gains goes to emit, in order; note gets a
// sentence when the log cannot be read (isErr) and when the process that
// runs the team stops or one runs it again (running, looked at every
// second; nil: never said).
func Follow(ctx context.Context, events *event.EventFollower, running func(context.Context) bool, emit func(event.Event), note func(text string, isErr bool)) {
	was := running == nil || running(ctx)
	lastLook := time.Now()
	for {
		evs, err := events.Next(ctx)
		for _, e := range evs {
			emit(e)
		}
		if err != nil {
			note(err.Error(), true)
		}
		if running != nil && time.Since(lastLook) >= time.Second {
			lastLook = time.Now()
			if now := running(ctx); now != was {
				was = now
				note(WatchedRunning(now), false)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(followInterval):
		}
	}
}

// WatchedRunning is the sentence a watch says when the process running
// the team stops (running false) or one runs it again.
func WatchedRunning(running bool) string {
	if running {
		return "a process runs the team again: its events show here"
	}
	return "no process runs the team now: messages wait in the inboxes until one does (quit and run agentteam chat to run it here)"
}
